import { Injectable, OnModuleInit } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { TenantLevel, ToolRef, appliesToCaller, matchesToolPattern } from '@tollgate/kernel';
import { OrgConfigCache, RedisService, ScriptCall } from '@tollgate/redis';
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

/** A rule's window counter for a call (per rule with a calls-per-window limit; leases keep them this way). */
export interface RateLimitWindow {
  readonly key: string;
  readonly prevKey: string;
  readonly limit: number;
  readonly windowMs: number;
  readonly windowStart: number;
}

/** A rule's concurrency set, which a call takes a slot in (per rule with a concurrency limit). */
export interface RateLimitSlots {
  readonly key: string;
  readonly max: number;
}

/**
 * A rule's keys in one window (current and previous window counters, concurrency set), made once
 * per rule and window, not once per call: calls admitted on this edge's leases never build them.
 */
export interface RuleWindowKeys {
  readonly index: number;
  readonly cur: string;
  readonly prev: string;
  readonly conc: string;
  readonly window: RateLimitWindow | null;
  readonly slots: RateLimitSlots | null;
}

/** An admission ready to run: see RateLimitService.planAdmission. */
export interface AdmissionPlan {
  callId: string;
  now: number;
  deadline: number;
  rules: RateLimitRule[];
  /** Each rule's keys in the call's window, in the order of `rules`. */
  ruleKeys: readonly RuleWindowKeys[];
  /** The call's window counters: per rule with a calls-per-window limit (leases keep them this way). */
  windows: RateLimitWindow[];
  /** The concurrency sets the call takes a slot in: per rule with a concurrency limit. */
  slots: RateLimitSlots[];
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
  /** Each cached rule's keys in its latest window (a rule reloaded is a new object: its keys are made again). */
  private readonly windowKeys = new WeakMap<RateLimitRule, RuleWindowKeys>();

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
    return rulesApplying(await this.cache.get(caller.orgId), caller, tool);
  }

  /**
   * What admitting a call takes: the rules that apply, their window counters and concurrency sets
   * (what this edge's leases admit against); null when no rule applies. The keys and arguments of
   * RATE_LIMIT_LUA's rl_check/rl_apply are made only for a call checked in Redis (scriptCall), for
   * callers that run the admission inside a larger script (@tollgate/admission runs it with the
   * budget reservation). A concurrency slot whose edge died is freed at `deadline`. Without a
   * promise when the organisation's rules are cached (nearly every call: each promise waited for
   * is a turn of the microtask queue).
   */
  planAdmission(
    caller: RateLimitCaller,
    tool: ToolRef,
    callId: string,
    now: number,
    deadline: number,
  ): AdmissionPlan | null | Promise<AdmissionPlan | null> {
    const cached = this.cache.peek(caller.orgId);
    if (cached) return this.planWith(rulesApplying(cached, caller, tool), caller.orgId, callId, now, deadline);
    return this.rulesFor(caller, tool).then((rules) => this.planWith(rules, caller.orgId, callId, now, deadline));
  }

  private planWith(
    rules: RateLimitRule[],
    orgId: string,
    callId: string,
    now: number,
    deadline: number,
  ): AdmissionPlan | null {
    if (rules.length === 0) return null;
    const ruleKeys: RuleWindowKeys[] = [];
    const windows: RateLimitWindow[] = [];
    const slots: RateLimitSlots[] = [];
    for (const r of rules) {
      const keys = this.keysOf(orgId, r, now);
      ruleKeys.push(keys);
      if (keys.window) windows.push(keys.window);
      if (keys.slots) slots.push(keys.slots);
    }
    return { callId, now, deadline, rules, ruleKeys, windows, slots };
  }

  /** The keys and arguments of rl_check/rl_apply for a planned admission: per rule, its three keys and four numbers. */
  scriptCall(plan: AdmissionPlan): ScriptCall {
    const keys: string[] = [];
    const args: (string | number)[] = [plan.now, plan.callId, plan.deadline];
    plan.rules.forEach((r, i) => {
      const k = plan.ruleKeys[i];
      const windowMs = r.windowSeconds * 1000;
      keys.push(k.cur, k.prev, k.conc);
      args.push(r.callsPerWindow ?? 0, windowMs, k.index * windowMs, r.maxConcurrent ?? 0);
    });
    return { keys, args };
  }

  /** A rule's keys in the window of `now`, made again only when the window moves on. */
  private keysOf(orgId: string, r: RateLimitRule, now: number): RuleWindowKeys {
    const windowMs = r.windowSeconds * 1000;
    const index = Math.floor(now / windowMs);
    const kept = this.windowKeys.get(r);
    if (kept && kept.index === index) return kept;
    const base = this.redis.orgKey(orgId, 'rl', r.id);
    const [cur, prev, conc] = [`${base}:w:${index}`, `${base}:w:${index - 1}`, `${base}:c`];
    const keys: RuleWindowKeys = {
      index,
      cur,
      prev,
      conc,
      window: r.callsPerWindow
        ? { key: cur, prevKey: prev, limit: r.callsPerWindow, windowMs, windowStart: index * windowMs }
        : null,
      slots: r.maxConcurrent ? { key: conc, max: r.maxConcurrent } : null,
    };
    this.windowKeys.set(r, keys);
    return keys;
  }

  /** The refusal in rl_check's answer (decoded by decodeRateLimitRefusal). */
  refusalOf(plan: AdmissionPlan, refusal: RateLimitCheckRefusal): RateLimitRefusal {
    return { admitted: false, rule: plan.rules[refusal.index], kind: refusal.kind, retryAfterMs: refusal.retryAfterMs };
  }
}

/** The organisation's rules that apply to a caller's call of a tool. */
function rulesApplying(rules: RateLimitRule[], caller: RateLimitCaller, tool: ToolRef): RateLimitRule[] {
  return rules.filter((r) => appliesToCaller(r, caller) && matchesToolPattern(r.toolPattern, tool));
}
