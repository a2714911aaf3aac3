import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { RedisClient } from '@tollgate/redis';
import { Prisma, type PrismaClient, type PrismaService } from '@tollgate/db';
import { redisOAuthAdapter } from './oauth-redis.adapter';

interface StoredPayload {
  uid?: string;
  grantId?: string;
  clientId?: string;
  consumed?: number;
  [field: string]: unknown;
}

/**
 * The keyed hash of the address a registration comes from, set by the HTTP layer around
 * oidc-provider's registration endpoint so the stored client carries it (the per-source limit
 * counts such rows).
 */
export const OAUTH_REGISTRATION_SOURCE = new AsyncLocalStorage<string>();

/** Models whose use keeps their client alive: a client with a grant is no longer "unused". */
const CLIENT_USE = new Set(['Grant', 'RefreshToken']);

export interface OAuthStoreOptions {
  prisma: PrismaService;
  redis: RedisClient;
  redisPrefix: string;
  /** How long a registered client lives until someone authorises it. */
  unusedClientTtlSeconds: number;
}

const hashId = (id: string) => createHash('sha256').update(id).digest('base64url');
const expiry = (expiresIn?: number) => (expiresIn && expiresIn > 0 ? new Date(Date.now() + expiresIn * 1000) : null);
const live = () => ({ OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }] });

/**
 * oidc-provider's storage. Everything that must survive a Redis loss, and everything an
 * unauthenticated caller can create (clients, interactions, sessions), lives in Postgres with an
 * expiry; only access tokens stay in Redis, because the edge reads them on every request and
 * they are short-lived and only issued to a signed-in person's authorised client.
 */
export function oauthStoreAdapter(opts: OAuthStoreOptions) {
  const RedisAdapter = redisOAuthAdapter(opts.redis, opts.redisPrefix);
  const PostgresAdapter = postgresOAuthAdapter(opts);
  return function OAuthStoreAdapter(model: string) {
    return model === 'AccessToken' ? new RedisAdapter(model) : new PostgresAdapter(model);
  } as unknown as new (model: string) => unknown;
}

function postgresOAuthAdapter({ prisma, unusedClientTtlSeconds }: OAuthStoreOptions) {
  return class PostgresOAuthAdapter {
    constructor(private readonly model: string) {}

    async upsert(id: string, payload: StoredPayload, expiresIn?: number): Promise<void> {
      if (this.model === 'Client') return this.upsertClient(id, payload);
      const expiresAt = expiry(expiresIn);
      const data = {
        payload: payload as Prisma.InputJsonValue,
        grantId: payload.grantId ?? null,
        uidHash: payload.uid ? hashId(payload.uid) : null,
        expiresAt,
      };
      await prisma.oAuthRecord.upsert({
        where: { model_idHash: { model: this.model, idHash: hashId(id) } },
        create: { model: this.model, idHash: hashId(id), ...data },
        update: data,
      });
      if (CLIENT_USE.has(this.model) && payload.clientId) {
        // Authorised: the client now lives as long as its longest grant or refresh token.
        await prisma.$executeRaw`UPDATE "OAuthClient" SET "usedAt" = now(),
          "expiresAt" = CASE WHEN ${expiresAt}::timestamp IS NULL THEN NULL ELSE GREATEST("expiresAt", ${expiresAt}::timestamp) END
          WHERE "clientId" = ${payload.clientId}`;
      }
    }

    private async upsertClient(clientId: string, payload: StoredPayload): Promise<void> {
      const metadata = payload as Prisma.InputJsonValue;
      await prisma.oAuthClient.upsert({
        where: { clientId },
        create: {
          clientId,
          metadata,
          sourceHash: OAUTH_REGISTRATION_SOURCE.getStore() ?? null,
          expiresAt: new Date(Date.now() + unusedClientTtlSeconds * 1000),
        },
        update: { metadata },
      });
    }

    async find(id: string): Promise<StoredPayload | undefined> {
      if (this.model === 'Client') {
        const row = await prisma.oAuthClient.findFirst({ where: { clientId: id, ...live() } });
        return (row?.metadata as StoredPayload | undefined) ?? undefined;
      }
      const row = await prisma.oAuthRecord.findFirst({ where: { model: this.model, idHash: hashId(id), ...live() } });
      return (row?.payload as StoredPayload | undefined) ?? undefined;
    }

    async findByUid(uid: string): Promise<StoredPayload | undefined> {
      const row = await prisma.oAuthRecord.findFirst({ where: { model: this.model, uidHash: hashId(uid), ...live() } });
      return (row?.payload as StoredPayload | undefined) ?? undefined;
    }

    async findByUserCode(): Promise<undefined> {
      return undefined; // The device flow is off.
    }

    async consume(id: string): Promise<void> {
      // One statement, so two redemptions of one code cannot both read it unconsumed.
      await prisma.$executeRaw`UPDATE "OAuthRecord"
        SET "payload" = jsonb_set("payload", '{consumed}', to_jsonb(extract(epoch from now())::bigint))
        WHERE "model" = ${this.model} AND "idHash" = ${hashId(id)}`;
    }

    async destroy(id: string): Promise<void> {
      if (this.model === 'Client') await prisma.oAuthClient.deleteMany({ where: { clientId: id } });
      else await prisma.oAuthRecord.deleteMany({ where: { model: this.model, idHash: hashId(id) } });
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await prisma.oAuthRecord.deleteMany({ where: { model: this.model, grantId } });
    }
  };
}

/** Deletes expired OAuth rows (clients nobody authorised, grants, codes, sessions); returns how many. */
export async function sweepExpiredOAuthState(
  prisma: Pick<PrismaClient, 'oAuthRecord' | 'oAuthClient' | 'oAuthGrantKey'>,
): Promise<number> {
  const now = new Date();
  const [records, clients, grantKeys] = await Promise.all([
    prisma.oAuthRecord.deleteMany({ where: { expiresAt: { lte: now } } }),
    prisma.oAuthClient.deleteMany({ where: { expiresAt: { lte: now } } }),
    prisma.oAuthGrantKey.deleteMany({ where: { expiresAt: { lte: now } } }),
  ]);
  return records.count + clients.count + grantKeys.count;
}
