import { Injectable, OnModuleInit } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { TenantLevel, ToolRef, appliesToCaller, matchesToolPattern } from '@tollgate/kernel';
import { OrgConfigCache, RedisService } from '@tollgate/redis';
import { RateLimitCheckRefusal } from './rate-limit-scripts';

export type RateLimitScope = TenantLevel;

export interface RateLimitRule {
  id: string;
  scope: RateLimitScope;
  scopeId: string;
  toolPattern: string;
  callsPerWindow: number | null;
  windowSeconds: number;
  maxConcurrent: number | null;
}

export interface RateLimitCaller {
  orgId: string;
  teamId: string;
  userId: string;
  keyId: string;
}

/** An admission ready to run: see RateLimitService.planAdmission. */
export interface AdmissionPlan {
  callId: string;
  rules: RateLimitRule[];
  keys: string[];
  args: (string | number)[];
  /** The call's window counters: per rule with a calls-per-window limit (leases keep them this way). */
  windows: { key: string; prevKey: string; limit: number; windowMs: number; windowStart: number }[];
  /** The concurrency sets the call takes a slot in: per rule with a concurrency limit. */
  slots: { key: string; max: number }[];
}

/** A call a rate limit refuses: the rule, which of its limits, and when the same call would be admitted. */
export interface RateLimitRefusal {
  admitted: false;
  rule: RateLimitRule;
  kind: 'WINDOW' | 'CONCURRENCY';
  retryAfterMs: number;
}

/** Calls per window and concurrent calls, per level and per tool pattern, counted in Redis. */
@Injectable()
export class RateLimitService implements OnModuleInit {
  private readonly cache: OrgConfigCache<RateLimitRule[]>;

  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
  ) {
    this.cache = new OrgConfigCache((orgId) => this.prisma.rateLimit.findMany({ where: { orgId } }));
  }

  async onModuleInit(): Promise<void> {
    await this.cache.attach(this.redis);
  }

  async rulesFor(caller: RateLimitCaller, tool: ToolRef): Promise<RateLimitRule[]> {
    return (await this.cache.get(caller.orgId)).filter(
      (r) => appliesToCaller(r, caller) && matchesToolPattern(r.toolPattern, tool),
    );
  }

  /**
   * What admitting a call takes: the rules that apply and the keys and arguments of RATE_LIMIT_LUA's
   * rl_check/rl_apply; null when no rule applies. For callers that run the admission inside a
   * larger script (@tollgate/admission runs it with the budget reservation). A concurrency slot
   * whose edge died is freed at `deadline`.
   */
  async planAdmission(
    caller: RateLimitCaller,
    tool: ToolRef,
    callId: string,
    now: number,
    deadline: number,
  ): Promise<AdmissionPlan | null> {
    const rules = await this.rulesFor(caller, tool);
    if (rules.length === 0) return null;
    const plan: AdmissionPlan = { callId, rules, keys: [], args: [now, callId, deadline], windows: [], slots: [] };
    for (const r of rules) {
      const windowMs = r.windowSeconds * 1000;
      const index = Math.floor(now / windowMs);
      const base = this.redis.orgKey(caller.orgId, 'rl', r.id);
      const [cur, prev, conc] = [`${base}:w:${index}`, `${base}:w:${index - 1}`, `${base}:c`];
      plan.keys.push(cur, prev, conc);
      plan.args.push(r.callsPerWindow ?? 0, windowMs, index * windowMs, r.maxConcurrent ?? 0);
      if (r.callsPerWindow)
        plan.windows.push({
          key: cur,
          prevKey: prev,
          limit: r.callsPerWindow,
          windowMs,
          windowStart: index * windowMs,
        });
      if (r.maxConcurrent) plan.slots.push({ key: conc, max: r.maxConcurrent });
    }
    return plan;
  }

  /** The refusal in rl_check's answer (decoded by decodeRateLimitRefusal). */
  refusalOf(plan: AdmissionPlan, refusal: RateLimitCheckRefusal): RateLimitRefusal {
    return { admitted: false, rule: plan.rules[refusal.index], kind: refusal.kind, retryAfterMs: refusal.retryAfterMs };
  }
}
