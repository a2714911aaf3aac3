import { adminApi, answer } from '../api/admin-client';
import type { Key } from '../api/admin-types';

/** The most ids one `GET …/keys/page?ids=` takes (the API's page size). */
const IDS_PER_LOOKUP = 200;

/**
 * The keys with these ids that the caller reaches, revoked and expired ones included (a budget or a past
 * call still names them): what a page shows, asked by id instead of loading every key of the org.
 */
export async function keysByIds(orgId: string, ids: readonly string[]): Promise<Key[]> {
  const unique = [...new Set(ids)];
  const lookups: Promise<Key[]>[] = [];
  for (let i = 0; i < unique.length; i += IDS_PER_LOOKUP) {
    const chunk = unique.slice(i, i + IDS_PER_LOOKUP);
    lookups.push(
      answer(
        adminApi.GET('/v1/orgs/{orgId}/keys/page', {
          params: { path: { orgId }, query: { ids: chunk.join(','), inactive: true, limit: IDS_PER_LOOKUP } },
        }),
      ).then((page) => page.keys),
    );
  }
  return (await Promise.all(lookups)).flat();
}
