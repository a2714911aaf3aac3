import { MicrosInput, toMicros } from './money';

export type BudgetForecast =
  | { kind: 'no-spend' }
  | { kind: 'exhausted' }
  | { kind: 'runs-out'; at: Date }
  | { kind: 'lasts'; resetsAt: Date | null };

/**
 * At the rate spent so far in this period, when the budget runs out. Linear: spend / elapsed
 * time, in BigInt milliseconds and micro-units so a large budget does not lose precision.
 */
export function forecastBudget(input: {
  limitMicros: MicrosInput;
  spentMicros: MicrosInput;
  periodStart: string | Date;
  resetsAt: string | Date | null;
  now?: Date;
}): BudgetForecast {
  const limit = toMicros(input.limitMicros);
  const spent = toMicros(input.spentMicros);
  const now = BigInt((input.now ?? new Date()).getTime());
  const start = BigInt(new Date(input.periodStart).getTime());
  const resetsAt = input.resetsAt === null ? null : new Date(input.resetsAt);
  if (spent >= limit) return { kind: 'exhausted' };
  if (spent <= 0n || now <= start) return { kind: 'no-spend' };
  const elapsed = now - start;
  const at = now + ((limit - spent) * elapsed) / spent;
  if (resetsAt && at >= BigInt(resetsAt.getTime())) return { kind: 'lasts', resetsAt };
  return { kind: 'runs-out', at: new Date(Number(at)) };
}
