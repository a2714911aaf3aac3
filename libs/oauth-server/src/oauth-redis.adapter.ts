import type { RedisClient } from '@tollgate/redis';
import { oauthStoreKey } from '@tollgate/identity';

interface StoredPayload {
  uid?: string;
  userCode?: string;
  grantId?: string;
  consumed?: number;
  [field: string]: unknown;
}

/** Models removed with their grant when a grant is revoked (code reuse, revocation, consent withdrawn). */
const GRANTABLE = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
]);

/**
 * oidc-provider's storage in Redis, so any admin-api replica serves any step of a flow and the
 * edge can read an access token. Ids are hashed in key names (see `oauthStoreKey`).
 */
export function redisOAuthAdapter(redis: RedisClient, prefix: string) {
  const key = (model: string, id: string) => oauthStoreKey(prefix, model, id);
  const grantKey = (grantId: string) => oauthStoreKey(prefix, 'GrantIndex', grantId);
  const uidKey = (uid: string) => oauthStoreKey(prefix, 'SessionUid', uid);
  const userCodeKey = (code: string) => oauthStoreKey(prefix, 'UserCode', code);

  return class RedisOAuthAdapter {
    constructor(private readonly model: string) {}

    async upsert(id: string, payload: StoredPayload, expiresIn?: number): Promise<void> {
      const k = key(this.model, id);
      const multi = redis.multi();
      const ttl = expiresIn && expiresIn > 0 ? Math.ceil(expiresIn) : undefined;
      if (ttl) multi.set(k, JSON.stringify(payload), 'EX', ttl);
      else multi.set(k, JSON.stringify(payload));
      if (GRANTABLE.has(this.model) && payload.grantId) {
        const g = grantKey(payload.grantId);
        multi.rpush(g, k);
        // The index lives as long as its longest-lived token.
        if (ttl) multi.expire(g, ttl, 'NX').expire(g, ttl, 'GT');
        else multi.persist(g);
      }
      if (payload.uid) multi.set(uidKey(payload.uid), id, ...((ttl ? ['EX', ttl] : []) as ['EX', number]));
      if (payload.userCode)
        multi.set(userCodeKey(payload.userCode), id, ...((ttl ? ['EX', ttl] : []) as ['EX', number]));
      await multi.exec();
    }

    async find(id: string): Promise<StoredPayload | undefined> {
      const raw = await redis.get(key(this.model, id));
      return raw ? (JSON.parse(raw) as StoredPayload) : undefined;
    }

    async findByUid(uid: string): Promise<StoredPayload | undefined> {
      const id = await redis.get(uidKey(uid));
      return id ? this.find(id) : undefined;
    }

    async findByUserCode(userCode: string): Promise<StoredPayload | undefined> {
      const id = await redis.get(userCodeKey(userCode));
      return id ? this.find(id) : undefined;
    }

    async consume(id: string): Promise<void> {
      const k = key(this.model, id);
      const raw = await redis.get(k);
      if (!raw) return;
      const ttl = await redis.pttl(k);
      const payload = { ...(JSON.parse(raw) as StoredPayload), consumed: Math.floor(Date.now() / 1000) };
      if (ttl > 0) await redis.set(k, JSON.stringify(payload), 'PX', ttl);
      else await redis.set(k, JSON.stringify(payload));
    }

    async destroy(id: string): Promise<void> {
      await redis.del(key(this.model, id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      const g = grantKey(grantId);
      const keys = await redis.lrange(g, 0, -1);
      await redis.del(...keys, g);
    }
  };
}
