/**
 * The alert thresholds (percent of the limit) that `spent` has reached: `spent * 100 >= t * limit`,
 * in integers. Nothing is crossed before anything is spent (a zero limit alerts on the first spend).
 */
export function crossedThresholds(thresholds: readonly number[], limitMicros: bigint, spentMicros: bigint): number[] {
  if (spentMicros <= 0n) return [];
  return [...new Set(thresholds)].filter((t) => spentMicros * 100n >= BigInt(t) * limitMicros).sort((a, b) => a - b);
}

/** Spent as a share of the limit in basis points (10000 = 100 %), rounded down; null for a zero limit. */
export function utilisationBasisPoints(limitMicros: bigint, spentMicros: bigint): number | null {
  if (limitMicros <= 0n) return null;
  return Number((spentMicros * 10_000n) / limitMicros);
}
