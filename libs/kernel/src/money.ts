/** Money is integer micro-units (1 USD = 1,000,000 micro-units), held as bigint. */
export type Micros = bigint;

export const MICROS_PER_UNIT = 1_000_000n;

/** Converts an API integer (JSON number or numeric string) to micro-units, rejecting fractions. */
export function toMicros(value: number | string | bigint): Micros {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new RangeError(`not an integer number of micro-units: ${value}`);
    return BigInt(value);
  }
  if (!/^-?\d+$/.test(value)) throw new RangeError(`not an integer number of micro-units: ${value}`);
  return BigInt(value);
}

/** Micro-units as a JSON number; every amount Tollgate handles stays below 2^53. */
export function microsToJson(value: Micros): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError(`amount out of JSON-safe range: ${value}`);
  return n;
}

/** Formats micro-units as a decimal currency string without floating point (`1234567n` -> `"1.234567"`). */
export function formatMicros(value: Micros): string {
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const units = abs / MICROS_PER_UNIT;
  const fraction = (abs % MICROS_PER_UNIT).toString().padStart(6, '0');
  return `${negative ? '-' : ''}${units}.${fraction}`;
}

export function maxMicros(a: Micros, b: Micros): Micros {
  return a > b ? a : b;
}

export function minMicros(a: Micros, b: Micros): Micros {
  return a < b ? a : b;
}
