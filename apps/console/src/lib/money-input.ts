/**
 * A typed amount (`"12.5"`, `"0.000125"`) to integer micro-units without a float in between;
 * null when it is not a non-negative decimal with at most six fraction digits.
 */
export function decimalToMicros(text: string): bigint | null {
  const m = /^(\d+)(?:\.(\d{0,6}))?$/.exec(text.trim());
  if (!m) return null;
  return BigInt(m[1]) * 1_000_000n + BigInt((m[2] ?? '').padEnd(6, '0'));
}
