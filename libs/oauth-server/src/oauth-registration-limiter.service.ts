import { Injectable } from '@nestjs/common';
import { createHmac } from 'node:crypto';
import { PrismaService } from '@tollgate/db';

const HOUR_MS = 3_600_000;

export interface RegistrationLimits {
  perSourcePerHour: number;
  maxUnusedClients: number;
}

/** Whether one more registration may be stored now; `retryAfterSeconds` when not. */
export type RegistrationVerdict = { allowed: true } | { allowed: false; reason: string; retryAfterSeconds: number };

/**
 * Bounds unauthenticated dynamic client registration by what is already stored (so every replica
 * agrees and nothing extra is kept): at most N clients per source address in the last hour, and
 * no new client while too many registered clients wait unused (they expire on their own).
 */
@Injectable()
export class OAuthRegistrationLimiter {
  constructor(private readonly prisma: PrismaService) {}

  /** A keyed hash of the address, so stored rows do not hold people's addresses. */
  sourceHash(address: string, secret: string): string {
    return createHmac('sha256', secret).update(`oauth-registration:${address}`).digest('base64url');
  }

  async check(sourceHash: string, limits: RegistrationLimits): Promise<RegistrationVerdict> {
    const since = new Date(Date.now() - HOUR_MS);
    const recent = await this.prisma.oAuthClient.findMany({
      where: { sourceHash, createdAt: { gt: since } },
      select: { createdAt: true },
      orderBy: { createdAt: 'asc' },
      take: limits.perSourcePerHour,
    });
    if (recent.length >= limits.perSourcePerHour) {
      const retryAfterSeconds = Math.max(1, Math.ceil((recent[0].createdAt.getTime() + HOUR_MS - Date.now()) / 1000));
      return {
        allowed: false,
        reason: `at most ${limits.perSourcePerHour} client registrations per hour from one address`,
        retryAfterSeconds,
      };
    }
    const unused = await this.prisma.oAuthClient.count({ where: { usedAt: null, expiresAt: { gt: new Date() } } });
    if (unused >= limits.maxUnusedClients)
      return {
        allowed: false,
        reason: `${unused} registered clients are waiting unused; registration resumes as they expire`,
        retryAfterSeconds: 600,
      };
    return { allowed: true };
  }
}
