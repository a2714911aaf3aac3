import { BUDGET_LUA, BudgetCheckAnswer, CounterAmounts, counterAt, decodeBudgetCheck } from '@tollgate/budget';
import { Micros } from '@tollgate/kernel';
import { decodeRateLimitRefusal, RATE_LIMIT_LUA, RateLimitCheckRefusal } from '@tollgate/rate-limit';
import {
  luaAmount,
  luaScript,
  readLuaFile,
  replyAmount,
  replyArray,
  replyInt,
  ScriptCall,
  ScriptCodec,
} from '@tollgate/redis';

/**
 * The money path's scripts, each a `.lua` file beside this module run after the rate-limit and
 * budget libraries' functions (rate-limit.lua, budget.lua), so a call is checked, counted and
 * reserved (or settled) in one script. Each has its codec here: KEYS and ARGV from a typed input,
 * the reply read into a typed result. Amounts go in and come back as decimal strings.
 */
function moneyScript(name: string) {
  return luaScript(name, RATE_LIMIT_LUA, BUDGET_LUA, readLuaFile(__dirname, `${name}.lua`));
}

export interface AdmitAndReserveInput {
  /** The organisation's shard epoch: without it Redis lost its data and nothing is admitted. */
  epochKey: string;
  /** The rate-limit part (RateLimitService.planAdmission's keys and args), null when no rule applies. */
  rateLimits: ScriptCall | null;
  /** The budget part (BudgetService.planReservation's keys and args), null when no budget applies. */
  budgets: ScriptCall | null;
}

export type AdmitAndReserveResult =
  | { kind: 'epoch-lost' }
  | { kind: 'rate-limited'; refusal: RateLimitCheckRefusal }
  /** What the budgets answered: reserved (then the rate limits counted the call too), short, or a counter missing. */
  | { kind: 'budget'; answer: BudgetCheckAnswer };

/** admit-and-reserve.lua: every rate limit and budget of a call checked, then counted and reserved, or nothing. */
export const ADMIT_AND_RESERVE: ScriptCodec<AdmitAndReserveInput, AdmitAndReserveResult> = {
  script: moneyScript('admit-and-reserve'),
  encode: ({ epochKey, rateLimits, budgets }) => ({
    keys: [epochKey, ...(rateLimits?.keys ?? []), ...(budgets?.keys ?? [])],
    args: [
      rateLimits?.keys.length ?? 0,
      rateLimits?.args.length ?? 0,
      ...(rateLimits?.args ?? []),
      ...(budgets?.args ?? []),
    ],
  }),
  decode: (reply) => {
    const r = replyArray(reply);
    switch (replyInt(r[0])) {
      case 3:
        return { kind: 'epoch-lost' };
      case 1:
        return { kind: 'rate-limited', refusal: decodeRateLimitRefusal(r[1]) };
      case 0:
      case 2:
        return { kind: 'budget', answer: decodeBudgetCheck(r[1]) };
      default:
        throw new Error(`admit-and-reserve: unknown answer ${String(r[0])}`);
    }
  },
};

/** A call settled at its actual cost: its reservation dropped, the cost spent, its concurrency slots freed. */
export interface SettlementInput {
  callId: string;
  /** R, Z, then the call's counters (BudgetService.settlementKeys); empty when it held no budget. */
  budgetKeys: string[];
  slotKeys: string[];
  actual: Micros;
}

/** One organisation's budget leases that calls completed under: each one's cost moves from leased to spent. */
export interface LeaseConversionGroup {
  rKey: string;
  leases: { id: string; counterKey: string; amount: Micros }[];
}

export interface CompleteCallsInput {
  /** The edge's bitmap of scripts run, and this script's bit in it (a resent script changes nothing). */
  bitmapKey: string;
  bit: number;
  /** The usage outbox (the shard's stream); null when the batch has no event. */
  outboxKey: string | null;
  epochKey: string;
  settlements: SettlementInput[];
  conversions: LeaseConversionGroup[];
  /** Usage events, each one outbox entry's field and value. */
  events: [string, string][];
}

/** What a lease's conversion found: the lease live, swept (the cost still charged) or its counter lost. */
export interface ConversionAnswer {
  lease: 'live' | 'swept' | 'counter-lost';
  /** The counter after the conversion (0 when lost). */
  spent: Micros;
  leased: Micros;
}

export type CompleteCallsResult =
  /** This script had already run (resent after a reconnect); its first answer was lost. */
  | { kind: 'already-run' }
  /** Applied; `epochLost` when the shard's epoch was gone. Conversions in the input's order. */
  | { kind: 'applied'; epochLost: boolean; conversions: ConversionAnswer[] };

const CONVERSION_STATE = { 1: 'live', 0: 'swept', [-1]: 'counter-lost' } as const;

/** complete-calls.lua: a turn's settlements, lease conversions and usage events of one organisation. */
export const COMPLETE_CALLS: ScriptCodec<CompleteCallsInput, CompleteCallsResult> = {
  script: moneyScript('complete-calls'),
  encode: (i) => {
    // With no event the outbox is not touched; the bitmap stands in for its key (same slot).
    const keys = [i.bitmapKey, i.outboxKey ?? i.bitmapKey, i.epochKey];
    const args: (string | number)[] = [i.bit, i.settlements.length, i.conversions.length, i.events.length];
    for (const s of i.settlements) {
      keys.push(...s.budgetKeys, ...s.slotKeys);
      args.push(s.budgetKeys.length, s.slotKeys.length, s.callId, luaAmount(s.actual));
    }
    for (const g of i.conversions) {
      keys.push(g.rKey, ...g.leases.map((l) => l.counterKey));
      args.push(g.leases.length);
      for (const l of g.leases) args.push(l.id, luaAmount(l.amount));
    }
    for (const [field, value] of i.events) args.push(field, value);
    return { keys, args };
  },
  decode: (reply) => {
    const r = replyArray(reply);
    const status = replyInt(r[0]);
    if (status === 2) return { kind: 'already-run' };
    if (status !== 0 && status !== 1) throw new Error(`complete-calls: unknown answer ${status}`);
    const conversions: ConversionAnswer[] = [];
    for (let j = 1; j + 2 < r.length; j += 3) {
      const state = replyInt(r[j]);
      if (state !== 1 && state !== 0 && state !== -1) throw new Error(`complete-calls: unknown lease state ${state}`);
      conversions.push({ lease: CONVERSION_STATE[state], spent: replyAmount(r[j + 1]), leased: replyAmount(r[j + 2]) });
    }
    return { kind: 'applied', epochLost: status === 0, conversions };
  },
};

export interface LeaseGrantInput {
  rKey: string;
  zKey: string;
  epochKey: string;
  now: number;
  /** Redis sweeps a granted lease at this time (ms) unless it is renewed. */
  deadline: number;
  /** A grant takes at most 1/share of what is left. */
  share: number;
  budgets: { id: string; counterKey: string; want: Micros; minGrant: Micros; limit: Micros; hard: boolean }[];
  windows: {
    key: string;
    prevKey: string;
    limit: number;
    windowMs: number;
    windowStart: number;
    want: number;
    minGrant: number;
  }[];
  /** Slots are granted as members `memberPrefix + n`, n from firstMember up. */
  slots: { key: string; max: number; want: number; minGrant: number; memberPrefix: string; firstMember: number }[];
}

/** A budget lease's grant (0: refused, the limit is near) and the counter as the grant left it. */
export type BudgetGrant = { kind: 'no-counter' } | { kind: 'counter'; granted: Micros; counter: CounterAmounts };

export type LeaseGrantResult =
  | { kind: 'epoch-lost' }
  /** In the input's order: per budget its grant, per window and per set the calls or slots granted. */
  | { kind: 'granted'; budgets: BudgetGrant[]; windows: number[]; slots: number[] };

/** lease-grant.lua: blocks of budget allowance, window calls and concurrency slots, for one organisation. */
export const LEASE_GRANT: ScriptCodec<LeaseGrantInput, LeaseGrantResult> = {
  script: moneyScript('lease-grant'),
  encode: (i) => {
    const keys = [i.rKey, i.zKey];
    const args: (string | number)[] = [i.now, i.deadline, i.share, i.budgets.length, i.windows.length, i.slots.length];
    for (const b of i.budgets) {
      keys.push(b.counterKey);
      args.push(b.id, luaAmount(b.want), luaAmount(b.minGrant), luaAmount(b.limit), b.hard ? '1' : '0');
    }
    for (const w of i.windows) {
      keys.push(w.key, w.prevKey);
      args.push(w.limit, w.windowMs, w.windowStart, w.want, w.minGrant);
    }
    for (const s of i.slots) {
      keys.push(s.key);
      args.push(s.max, s.want, s.minGrant, s.memberPrefix, s.firstMember);
    }
    keys.push(i.epochKey);
    return { keys, args };
  },
  decode: (reply, i) => {
    const r = replyArray(reply);
    if (r.length === 1 && r[0] === -2) return { kind: 'epoch-lost' };
    const budgets: BudgetGrant[] = i.budgets.map((_, j) => {
      const granted = replyAmount(r[4 * j]);
      return granted < 0n ? { kind: 'no-counter' } : { kind: 'counter', granted, counter: counterAt(r, 4 * j + 1) };
    });
    const rest = r.slice(4 * i.budgets.length).map(replyInt);
    return {
      kind: 'granted',
      budgets,
      windows: rest.slice(0, i.windows.length),
      slots: rest.slice(i.windows.length, i.windows.length + i.slots.length),
    };
  },
};

export interface LeaseRenewInput {
  rKey: string;
  zKey: string;
  epochKey: string;
  now: number;
  deadline: number;
  budgetLeaseIds: string[];
  slots: { key: string; members: string[] }[];
}

export type LeaseRenewResult =
  | { kind: 'epoch-lost' }
  /** In the input's order: true for a lease still whole, false for one Redis swept (in part, for slots). */
  | { kind: 'renewed'; budgets: boolean[]; slots: boolean[] };

/** lease-renew.lua: moves one organisation's leases' deadlines on. */
export const LEASE_RENEW: ScriptCodec<LeaseRenewInput, LeaseRenewResult> = {
  script: luaScript('lease-renew', readLuaFile(__dirname, 'lease-renew.lua')),
  encode: (i) => {
    const args: (string | number)[] = [i.now, i.deadline, i.budgetLeaseIds.length, ...i.budgetLeaseIds];
    for (const s of i.slots) args.push(s.members.length, ...s.members);
    return { keys: [i.rKey, i.zKey, ...i.slots.map((s) => s.key), i.epochKey], args };
  },
  decode: (reply, i) => {
    const r = replyArray(reply).map(replyInt);
    if (r.length === 1 && r[0] === -2) return { kind: 'epoch-lost' };
    const whole = r.map((v) => v === 1);
    return {
      kind: 'renewed',
      budgets: whole.slice(0, i.budgetLeaseIds.length),
      slots: whole.slice(i.budgetLeaseIds.length),
    };
  },
};

export interface LeaseReleaseInput {
  rKey: string;
  zKey: string;
  /** Budget leases and what to give back of each (all it holds, and its record, when that is as much or more). */
  budgets: { id: string; counterKey: string; amount: Micros }[];
  windows: { key: string; calls: number }[];
  slots: { key: string; members: string[] }[];
}

/** lease-release.lua: gives back what leases hold unused. Answers what went back per budget lease. */
export const LEASE_RELEASE: ScriptCodec<LeaseReleaseInput, { budgetsReturned: Micros[] }> = {
  script: moneyScript('lease-release'),
  encode: (i) => {
    const keys = [
      i.rKey,
      i.zKey,
      ...i.budgets.map((b) => b.counterKey),
      ...i.windows.map((w) => w.key),
      ...i.slots.map((s) => s.key),
    ];
    const args: (string | number)[] = [i.budgets.length, i.windows.length, i.slots.length];
    for (const b of i.budgets) args.push(b.id, luaAmount(b.amount));
    for (const w of i.windows) args.push(w.calls);
    for (const s of i.slots) args.push(s.members.length, ...s.members);
    return { keys, args };
  },
  decode: (reply) => ({ budgetsReturned: replyArray(reply).map(replyAmount) }),
};

export interface ExtendHoldInput {
  callId: string;
  /** The organisation's reservation records and deadlines (R, Z); null when the call reserved no budget. */
  recordKeys: [string, string] | null;
  slotKeys: string[];
  deadline: number;
  now: number;
}

/**
 * extend-hold.lua: a call's reservation and concurrency slots held until `deadline`, all or nothing;
 * false, having written nothing, when any of them is gone (swept, settled or lost): the hold lapsed.
 */
export const EXTEND_HOLD: ScriptCodec<ExtendHoldInput, boolean> = {
  script: luaScript('extend-hold', readLuaFile(__dirname, 'extend-hold.lua')),
  encode: (i) => ({
    keys: [...(i.recordKeys ?? []), ...i.slotKeys],
    args: [i.callId, i.deadline, i.now, i.recordKeys ? '1' : '0'],
  }),
  decode: (reply) => replyInt(reply) === 1,
};
