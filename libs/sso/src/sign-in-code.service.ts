import { Injectable } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { AuditedBy, recordAudited } from '@tollgate/audit';
import { PrismaService } from '@tollgate/db';
import { RedisService } from '@tollgate/redis';

const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
export const SIGN_IN_CODE_MAX_TTL_SECONDS = 7 * 86_400;
/** Wrong codes one source may send in FAILURE_WINDOW_SECONDS before each further one costs a wait. */
export const SIGN_IN_CODE_FREE_FAILURES = 5;
/** The longest wait between two attempts of one source (it doubles with each wrong code). */
export const SIGN_IN_CODE_MAX_WAIT_SECONDS = 300;
const FAILURE_WINDOW_SECONDS = 900;

/** A verification: the code's owner, a wrong code, or this source must wait before trying again. */
export type SignInCodeVerdict =
  { kind: 'ok'; orgId: string; userId: string } | { kind: 'wrong' } | { kind: 'wait'; seconds: number };

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

  /**
   * Issues the user a new code, replacing the previous one. The code lives in Redis, so it cannot
   * join the audit row's transaction: the row is written first, the code stored, then the row
   * committed; a code whose row did not commit is voided again, so no code works unaudited.
   */
  async issue(
    orgId: string,
    userId: string,
    ttlSeconds: number,
    audit: AuditedBy<{ expiresAt: Date }>,
  ): Promise<IssuedSignInCode> {
    const bytes = randomBytes(16);
    let code = '';
    for (const b of bytes) code += CODE_ALPHABET[b % CODE_ALPHABET.length];
    code = code.replace(/(.{4})(?!$)/g, '$1-');
    const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
    let stored = false;
    try {
      await this.prisma.$transaction(async (tx) => {
        await recordAudited(tx, audit, { expiresAt });
        await this.store(orgId, userId, code, ttlSeconds);
        stored = true;
      });
    } catch (err) {
      if (stored) await this.revokeFor(userId);
      throw err;
    }
    return { code, expiresAt };
  }

  private async store(orgId: string, userId: string, code: string, ttlSeconds: number): Promise<void> {
    const previous = await this.redis.client.get(this.userKey(userId));
    const multi = this.redis.client.multi();
    if (previous) multi.del(this.codeKey(previous));
    const hash = hashCode(code);
    multi.set(this.codeKey(hash), JSON.stringify({ orgId, userId }), 'EX', ttlSeconds);
    multi.set(this.userKey(userId), hash, 'EX', ttlSeconds);
    await multi.exec();
  }

  /**
   * The user an email and code sign in. Throttled per source (a keyed hash of the address), not
   * per person: after SIGN_IN_CODE_FREE_FAILURES wrong codes, each attempt from that source must
   * wait twice as long as the last (at most SIGN_IN_CODE_MAX_WAIT_SECONDS), so a guesser slows to
   * a crawl while the person, from anywhere else, still signs in.
   */
  async verify(email: string, code: string, source: string): Promise<SignInCodeVerdict> {
    const failuresKey = this.redis.key('oauth', 'sign-in-failures', source);
    const waitKey = this.redis.key('oauth', 'sign-in-wait', source);
    const waitMs = await this.redis.client.pttl(waitKey);
    if (waitMs > 0) return { kind: 'wait', seconds: Math.ceil(waitMs / 1000) };
    const owner = await this.ownerOf(email, code);
    if (owner) return { kind: 'ok', ...owner };
    const [[, failures]] = (await this.redis.client
      .multi()
      .incr(failuresKey)
      .expire(failuresKey, FAILURE_WINDOW_SECONDS)
      .exec()) as [[Error | null, number]];
    if (failures > SIGN_IN_CODE_FREE_FAILURES) {
      const seconds = Math.min(2 ** (failures - SIGN_IN_CODE_FREE_FAILURES), SIGN_IN_CODE_MAX_WAIT_SECONDS);
      await this.redis.client.set(waitKey, '1', 'EX', seconds);
    }
    return { kind: 'wrong' };
  }

  /** Voids the user's code (offboarding). */
  async revokeFor(userId: string): Promise<void> {
    const hash = await this.redis.client.getdel(this.userKey(userId));
    if (hash) await this.redis.client.del(this.codeKey(hash));
  }

  private async ownerOf(email: string, code: string): Promise<{ orgId: string; userId: string } | null> {
    const normalised = code.toUpperCase().replace(/[^A-Z0-9]/g, '');
    if (normalised.length !== 16) return null;
    const raw = await this.redis.client.get(this.codeKey(hashCode(normalised.replace(/(.{4})(?!$)/g, '$1-'))));
    if (!raw) return null;
    const owner = JSON.parse(raw) as { orgId: string; userId: string };
    const user = await this.prisma.user.findFirst({
      where: { id: owner.userId, orgId: owner.orgId, offboardedAt: null },
    });
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
