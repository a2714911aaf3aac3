import { Injectable } from '@nestjs/common';
import { IdentityService } from '@tollgate/identity';
import { RedisService } from '@tollgate/redis';

/**
 * Which key (kind OAUTH) an authorization grant stands for, written at consent and read each
 * time a token is issued from the grant (code exchange, refresh).
 */
@Injectable()
export class OAuthGrantKeys {
  constructor(
    private readonly redis: RedisService,
    private readonly identity: IdentityService,
  ) {}

  async bind(grantId: string, keyId: string, ttlSeconds: number): Promise<void> {
    await this.redis.client.set(this.redis.key('oauth', 'grant-key', grantId), keyId, 'EX', ttlSeconds);
  }

  /** The grant's key while it is live; null once the key is revoked or expired. */
  async liveKeyOf(grantId: string): Promise<string | null> {
    const keyId = await this.redis.client.get(this.redis.key('oauth', 'grant-key', grantId));
    if (!keyId) return null;
    return (await this.identity.findLiveOAuthKey(keyId)) ? keyId : null;
  }
}
