import { Injectable, OnModuleInit } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { OrgConfigCache, RedisService } from '@tollgate/redis';
import { PriceRuleData, selectPriceRule } from './price-rule';

/** The organisation's price book, cached per org and dropped when an admin changes it. */
@Injectable()
export class PricingService implements OnModuleInit {
  private readonly cache: OrgConfigCache<PriceRuleData[]>;

  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
  ) {
    this.cache = new OrgConfigCache((orgId) => this.prisma.priceRule.findMany({ where: { orgId } }));
  }

  async onModuleInit(): Promise<void> {
    await this.cache.attach(this.redis);
  }

  async priceFor(orgId: string, upstreamId: string, toolName: string, at: Date): Promise<PriceRuleData | null> {
    return selectPriceRule(await this.cache.get(orgId), upstreamId, toolName, at);
  }

  /**
   * priceFor without a promise, when the organisation's price book is cached and fresh: the rule,
   * or null for none; undefined when priceFor has to load the book. For a call's hot path.
   */
  cachedPriceFor(orgId: string, upstreamId: string, toolName: string, at: Date): PriceRuleData | null | undefined {
    const rules = this.cache.peek(orgId);
    return rules && selectPriceRule(rules, upstreamId, toolName, at);
  }
}
