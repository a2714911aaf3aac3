import { Injectable } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { PrismaService } from '@tollgate/db';
import { RedisService } from '@tollgate/redis';

const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
export const SIGN_IN_CODE_MAX_TTL_SECONDS = 7 * 86_400;
/** Wrong codes allowed per email in FAILURE_WINDOW_SECONDS before every attempt is refused. */
export const SIGN_IN_CODE_MAX_FAILURES = 10;
const FAILURE_WINDOW_SECONDS = 900;

export interface IssuedSignInCode {
  code: string;
  expiresAt: Date;
}

/**
 * Local sign-in for organisations without an identity provider (and the demo): an admin issues a
 * user a sign-in code (shown once, 16 characters, about 80 bits), which the user types with their
 * email on the authorization server's sign-in page until it expires. Issuing a new code replaces
 * the previous one. Only a hash is stored.
 */
@Injectable()
export class SignInCodeService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
  ) {}

  async issue(orgId: string, userId: string, ttlSeconds: number): Promise<IssuedSignInCode> {
    const bytes = randomBytes(16);
    let code = '';
    for (const b of bytes) code += CODE_ALPHABET[b % CODE_ALPHABET.length];
    code = code.replace(/(.{4})(?!$)/g, '$1-');
    const previous = await this.redis.client.get(this.userKey(userId));
    const multi = this.redis.client.multi();
    if (previous) multi.del(this.codeKey(previous));
    const hash = hashCode(code);
    multi.set(this.codeKey(hash), JSON.stringify({ orgId, userId }), 'EX', ttlSeconds);
    multi.set(this.userKey(userId), hash, 'EX', ttlSeconds);
    await multi.exec();
    return { code, expiresAt: new Date(Date.now() + ttlSeconds * 1000) };
  }

  /**
   * The user an email and code sign in; null for an unknown or expired code or another user's
   * email; 'locked' after too many wrong codes for the email (the code is not even checked).
   */
  async verify(email: string, code: string): Promise<{ orgId: string; userId: string } | null | 'locked'> {
    const failuresKey = this.redis.key('oauth', 'sign-in-failures', hashCode(email.trim().toLowerCase()));
    if (Number(await this.redis.client.get(failuresKey)) >= SIGN_IN_CODE_MAX_FAILURES) return 'locked';
    const owner = await this.ownerOf(email, code);
    if (!owner)
      await this.redis.client.multi().incr(failuresKey).expire(failuresKey, FAILURE_WINDOW_SECONDS, 'NX').exec();
    return owner;
  }

  private async ownerOf(email: string, code: string): Promise<{ orgId: string; userId: string } | null> {
    const normalised = code.toUpperCase().replace(/[^A-Z0-9]/g, '');
    if (normalised.length !== 16) return null;
    const raw = await this.redis.client.get(this.codeKey(hashCode(normalised.replace(/(.{4})(?!$)/g, '$1-'))));
    if (!raw) return null;
    const owner = JSON.parse(raw) as { orgId: string; userId: string };
    const user = await this.prisma.user.findFirst({ where: { id: owner.userId, orgId: owner.orgId } });
    if (!user || user.email.toLowerCase() !== email.trim().toLowerCase()) return null;
    return owner;
  }

  private codeKey(hash: string): string {
    return this.redis.key('oauth', 'sign-in-code', hash);
  }

  private userKey(userId: string): string {
    return this.redis.key('oauth', 'sign-in-code-of', userId);
  }
}

function hashCode(code: string): string {
  return createHash('sha256').update(code).digest('hex');
}
