import type { CallHold } from '@tollgate/admission';
import { Micros } from '@tollgate/kernel';
import { PriceRuleData, actualCallCost } from '@tollgate/pricing';
import type { ServedTool } from '@tollgate/upstream-registry';

/** A tool call once priced: what its admission reserved and its settlement charges against. */
export interface PricedCall {
  callId: string;
  tool: ServedTool;
  rule: PriceRuleData;
  outputTokenCap: number;
  /** Output tokens its reservation pays for: the likely count, or fewer to fit a hard budget. */
  reservedTokens: number;
  /** More output admitted once the result was known (see outputTopUp); settled with the call. */
  topUp: CallHold | null;
  /** A task's settlement made again whose charge is already in the counters: no top-up is admitted. */
  alreadyCharged?: boolean;
  startedAt: number;
}

/** What a call that delivered nothing costs (free unless its rule charges failed calls). */
export function failedCallCost(call: PricedCall): Micros {
  return actualCallCost(call.rule, { failed: true, outputTokens: 0, reportedCostMicros: null }, call.outputTokenCap);
}
