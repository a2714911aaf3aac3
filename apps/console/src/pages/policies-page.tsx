import { Stack } from '@mantine/core';
import { useMemo } from 'react';
import { adminApi, answer } from '../api/admin-client';
import { ErrorState, LoadingState } from '../components/page-states';
import { useLoad } from '../lib/use-load';
import { useSession } from '../session';
import { Simulator } from './policy-simulator';
import { PolicyEditor } from './policy-editor';
import type { Directory } from './policy-labels';

/** Names for scope ids: the org, teams, users ("Ada (ada@…)") and keys. */
function useNames(dir: Directory | null, orgId: string, orgName: string) {
  return useMemo(() => {
    const m = new Map<string, string>([[orgId, orgName]]);
    for (const t of dir?.teams ?? []) m.set(t.id, t.name);
    for (const u of dir?.users ?? []) m.set(u.id, u.name ? `${u.name} (${u.email})` : u.email);
    for (const k of dir?.keys ?? []) m.set(k.id, `${k.name} (${k.prefix}…)`);
    return m;
  }, [dir, orgId, orgName]);
}

export function PoliciesPage() {
  const { org } = useSession();
  const dir = useLoad<Directory>(async () => {
    const [teams, users, keys] = await Promise.all([
      answer(adminApi.GET('/v1/orgs/{orgId}/teams', { params: { path: { orgId: org.id } } })),
      answer(adminApi.GET('/v1/orgs/{orgId}/users', { params: { path: { orgId: org.id } } })),
      answer(adminApi.GET('/v1/orgs/{orgId}/keys', { params: { path: { orgId: org.id } } })),
    ]);
    return { teams, users, keys: keys.filter((k) => !k.revokedAt) };
  }, [org.id]);
  const names = useNames(dir.state === 'ready' ? dir.data : null, org.id, org.name);

  if (dir.state === 'loading') return <LoadingState label="Loading policies…" />;
  if (dir.state === 'error') return <ErrorState error={dir.error} what="policies" onRetry={dir.reload} />;
  return (
    <Stack gap="xl">
      <PolicyEditor dir={dir.data} names={names} />
      <Simulator keys={dir.data.keys} names={names} />
    </Stack>
  );
}
