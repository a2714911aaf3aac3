import { AuditedBy, recordAudited } from '@tollgate/audit';
import { Injectable } from '@nestjs/common';
import { PrismaService, RateLimit, scopeBelongsToOrg } from '@tollgate/db';
import { isValidToolPattern } from '@tollgate/kernel';
import { ORG_CONFIG_CHANGED_CHANNEL, RedisService } from '@tollgate/redis';
import { RateLimitException, RateLimitExceptionCode } from './rate-limit.exception';

export interface RateLimitInput {
  scope: 'ORG' | 'TEAM' | 'USER' | 'KEY';
  scopeId: string;
  toolPattern?: string;
  callsPerWindow?: number | null;
  windowSeconds?: number;
  maxConcurrent?: number | null;
}

/** Admin side of rate limits: the rules an organisation sets. Edges pick changes up at once. */
@Injectable()
export class RateLimitAdminService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
  ) {}

  async createRateLimit(orgId: string, input: RateLimitInput, audit: AuditedBy<RateLimit>): Promise<RateLimit> {
    const toolPattern = input.toolPattern ?? '*:*';
    if (!isValidToolPattern(toolPattern)) {
      throw new RateLimitException(
        RateLimitExceptionCode.InvalidRule,
        `toolPattern "${toolPattern}" is not a namespace:tool glob`,
        'toolPattern',
      );
    }
    if (!input.callsPerWindow && !input.maxConcurrent) {
      throw new RateLimitException(
        RateLimitExceptionCode.InvalidRule,
        'set callsPerWindow, maxConcurrent or both',
        'callsPerWindow',
      );
    }
    if (!(await scopeBelongsToOrg(this.prisma, orgId, input.scope, input.scopeId))) {
      throw new RateLimitException(
        RateLimitExceptionCode.ScopeNotFound,
        `${input.scope.toLowerCase()} ${input.scopeId} not found in this organization`,
        'scopeId',
      );
    }
    const rule = await this.prisma.$transaction(async (tx) => {
      const created = await tx.rateLimit.create({
        data: {
          orgId,
          scope: input.scope,
          scopeId: input.scopeId,
          toolPattern,
          callsPerWindow: input.callsPerWindow ?? null,
          windowSeconds: input.windowSeconds ?? 60,
          maxConcurrent: input.maxConcurrent ?? null,
        },
      });
      await recordAudited(tx, audit, created);
      return created;
    });
    await this.redis.publish(ORG_CONFIG_CHANGED_CHANNEL, orgId);
    return rule;
  }

  listRateLimits(orgId: string): Promise<RateLimit[]> {
    return this.prisma.rateLimit.findMany({ where: { orgId }, orderBy: { createdAt: 'asc' } });
  }

  async deleteRateLimit(orgId: string, id: string, audit: AuditedBy<RateLimit>): Promise<RateLimit> {
    const rule = await this.prisma.rateLimit.findFirst({ where: { orgId, id } });
    if (!rule)
      throw new RateLimitException(RateLimitExceptionCode.RuleNotFound, `rate limit ${id} not found`, 'rateLimitId');
    await this.prisma.$transaction(async (tx) => {
      await tx.rateLimit.delete({ where: { id } });
      await recordAudited(tx, audit, rule);
    });
    await this.redis.publish(ORG_CONFIG_CHANGED_CHANNEL, orgId);
    return rule;
  }
}
