/** `"12.5"` (units, as typed) -> 12500000n micro-units, exactly; null if not a plain non-negative amount. */
export function parseAmount(text: string): bigint | null {
  const m = /^\s*(\d+)(?:\.(\d{0,6}))?\s*$/.exec(text.replace(/,/g, ''));
  if (!m) return null;
  return BigInt(m[1]) * 1_000_000n + BigInt((m[2] ?? '').padEnd(6, '0'));
}
