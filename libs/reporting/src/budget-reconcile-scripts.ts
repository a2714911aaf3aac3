import { Micros } from '@tollgate/kernel';
import { luaScript, readLuaFile, replyAmount, replyArray, replyInt, ScriptCodec } from '@tollgate/redis';

/** Reconciliation's scripts (`.lua` files beside this module) and their codecs. */

export interface RepairSpentInput {
  counterKey: string;
  /** `spent` as reconciliation read it: the repair applies only if it still holds this. */
  seen: Micros;
  target: Micros;
}

/** set: repaired; moved: a settlement came in between (measure again); gone: the counter is missing. */
export type RepairSpentResult = 'set' | 'moved' | 'gone';

const REPAIR_SPENT_ANSWER = { 1: 'set', 0: 'moved', [-1]: 'gone' } as const;

/** repair-spent.lua: a counter's `spent` set to the ledger plus the outbox, if it has not moved. */
export const REPAIR_SPENT: ScriptCodec<RepairSpentInput, RepairSpentResult> = {
  script: luaScript('repair-spent', readLuaFile(__dirname, 'repair-spent.lua')),
  encode: (i) => ({ keys: [i.counterKey], args: [i.seen.toString(), i.target.toString()] }),
  decode: (reply) => {
    const v = replyInt(reply);
    if (v !== 1 && v !== 0 && v !== -1) throw new Error(`repair-spent: unknown answer ${v}`);
    return REPAIR_SPENT_ANSWER[v];
  },
};

export interface RepairHeldInput {
  /** The organisation's reservation and lease records (R), and where the sweep moved malformed ones. */
  recordsKey: string;
  malformedKey: string;
  counterKeys: string[];
}

/** A field's value before (as found: it may be malformed, which is why it is repaired) and after. */
export interface FieldRepair {
  before: string;
  after: Micros;
}

export interface RepairHeldResult {
  /** Per counter, in the input's order; null when the counter is missing (left alone). */
  counters: ({ reserved: FieldRepair; leased: FieldRepair } | null)[];
  /** The malformed records the sweep had moved aside, now deleted (the caller audits them). */
  malformed: { id: string; record: string }[];
}

/** repair-held.lua: `reserved` and `leased` set to what the records in flight hold; quarantined records taken. */
export const REPAIR_HELD: ScriptCodec<RepairHeldInput, RepairHeldResult> = {
  script: luaScript('repair-held', readLuaFile(__dirname, 'repair-held.lua')),
  encode: (i) => ({ keys: [i.recordsKey, i.malformedKey, ...i.counterKeys], args: [] }),
  decode: (reply, i) => {
    const r = replyArray(reply).map(String);
    const counters = i.counterKeys.map((_, j) => {
      const [rb, ra, lb, la] = r.slice(4 * j, 4 * j + 4);
      if (rb === '-1') return null;
      return { reserved: { before: rb, after: replyAmount(ra) }, leased: { before: lb, after: replyAmount(la) } };
    });
    const malformed: { id: string; record: string }[] = [];
    for (let j = 4 * i.counterKeys.length; j + 1 < r.length; j += 2) malformed.push({ id: r[j], record: r[j + 1] });
    return { counters, malformed };
  },
};
