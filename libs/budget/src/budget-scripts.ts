import { Micros } from '@tollgate/kernel';
import { luaScript, readLuaFile, replyAmount, replyArray, replyInt, ScriptCodec } from '@tollgate/redis';

/**
 * The budget functions in Lua (budget.lua): reserve, settle, sweep and lease, for the scripts of
 * @tollgate/admission, which run them with the rate limits. Read from the file beside this module.
 */
export const BUDGET_LUA = readLuaFile(__dirname, 'budget.lua');

/** A counter's fields as a script read or left them. */
export interface CounterAmounts {
  spent: Micros;
  reserved: Micros;
  leased: Micros;
}

/**
 * budget_check's or budget_apply's answer: every budget's counter (before the reservation for
 * budget_check, after it for budget_apply), a hard budget that is short (`index` 0-based), or a
 * budget whose counter is missing (the caller seeds it from the ledger and runs again).
 */
export type BudgetCheckAnswer =
  | { kind: 'reserved'; counters: CounterAmounts[] }
  | { kind: 'short'; index: number; counter: CounterAmounts }
  | { kind: 'no-counter'; index: number }
  /** The counter holds a field that is not an integer: refused until reconciliation rebuilds it. */
  | { kind: 'corrupt-counter'; index: number };

/** Reads budget_check's or budget_apply's reply (see budget.lua). */
export function decodeBudgetCheck(reply: unknown): BudgetCheckAnswer {
  const r = replyArray(reply);
  const status = replyInt(r[0]);
  if (status === -1) return { kind: 'no-counter', index: replyInt(r[1]) - 1 };
  if (status === -2) return { kind: 'corrupt-counter', index: replyInt(r[1]) - 1 };
  if (status === 0) return { kind: 'short', index: replyInt(r[1]) - 1, counter: counterAt(r, 2) };
  if (status !== 1) throw new Error(`budget script: unknown status ${status}`);
  const counters: CounterAmounts[] = [];
  for (let i = 1; i + 2 < r.length; i += 3) counters.push(counterAt(r, i));
  return { kind: 'reserved', counters };
}

/** spent, reserved, leased from three amount strings of a reply, starting at `at`. */
export function counterAt(reply: unknown[], at: number): CounterAmounts {
  return { spent: replyAmount(reply[at]), reserved: replyAmount(reply[at + 1]), leased: replyAmount(reply[at + 2]) };
}

/** Seeds a missing counter (seed-counter.lua). */
export interface SeedCounterInput {
  counterKey: string;
  spent: Micros;
  /** 0: the counter never expires (a TOTAL budget). */
  ttlSeconds: number;
}

/** True when this call seeded the counter, false when it was already there. */
export const SEED_COUNTER: ScriptCodec<SeedCounterInput, boolean> = {
  script: luaScript('seed-counter', readLuaFile(__dirname, 'seed-counter.lua')),
  encode: (i) => ({ keys: [i.counterKey], args: [i.spent.toString(), i.ttlSeconds] }),
  decode: (reply) => replyInt(reply) === 1,
};

/** The fields of a corrupt counter dropped by drop-corrupt-counter.lua ('' where absent). */
export interface CorruptCounterFields {
  spent: string;
  reserved: string;
  leased: string;
}

/** Drops a counter with a field that is not an integer, to be seeded again; null when it is readable or missing. */
export const DROP_CORRUPT_COUNTER: ScriptCodec<{ counterKey: string }, CorruptCounterFields | null> = {
  script: luaScript('drop-corrupt-counter', BUDGET_LUA, readLuaFile(__dirname, 'drop-corrupt-counter.lua')),
  encode: (i) => ({ keys: [i.counterKey], args: [] }),
  decode: (reply) => {
    const r = replyArray(reply).map(String);
    return r.length === 0 ? null : { spent: r[0], reserved: r[1], leased: r[2] };
  },
};
