/** Integer micro-units (1 unit = 1,000,000), as the admin API sends them: a JSON integer or a string. */
export type MicrosInput = bigint | number | string;

const MICROS_PER_UNIT = 1_000_000n;

/** To BigInt without ever going through a float; a non-integer is a bug upstream, so it throws. */
export function toMicros(value: MicrosInput): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new RangeError(`not an integer amount of micro-units: ${value}`);
    return BigInt(value);
  }
  if (!/^-?\d+$/.test(value)) throw new RangeError(`not an integer amount of micro-units: ${value}`);
  return BigInt(value);
}

/** `1234500n` -> `"1.2345"`: exact decimal, at least two fraction digits, trailing zeros beyond them trimmed. */
export function microsToDecimal(value: MicrosInput): string {
  const micros = toMicros(value);
  const negative = micros < 0n;
  const abs = negative ? -micros : micros;
  const units = abs / MICROS_PER_UNIT;
  let fraction = (abs % MICROS_PER_UNIT).toString().padStart(6, '0');
  while (fraction.length > 2 && fraction.endsWith('0')) fraction = fraction.slice(0, -1);
  return `${negative ? '-' : ''}${units}.${fraction}`;
}

const formatters = new Map<string, Intl.NumberFormat>();

/**
 * Micro-units as currency (`$1,234.50`, `€0.000125`). Intl formats a decimal *string* exactly
 * (no float in between), so the figure shown is the ledger's to the micro-unit.
 */
export function formatMoney(value: MicrosInput, currency: string, locale?: string): string {
  const key = `${locale ?? ''}|${currency}`;
  let f = formatters.get(key);
  if (!f) {
    f = new Intl.NumberFormat(locale, {
      style: 'currency',
      currency,
      minimumFractionDigits: 2,
      maximumFractionDigits: 6,
    });
    formatters.set(key, f);
  }
  // The string overload of format() is exact (Intl.NumberFormat v3); TypeScript's lib lacks it.
  return f.format(microsToDecimal(value) as unknown as number);
}

/** For chart geometry only (bar heights): never shown as a figure. */
export function microsToChartUnits(value: MicrosInput): number {
  return Number(toMicros(value)) / 1_000_000;
}

/** Sum of micro-unit amounts in BigInt. */
export function sumMicros(values: Iterable<MicrosInput>): bigint {
  let total = 0n;
  for (const v of values) total += toMicros(v);
  return total;
}

/** part / whole as a percentage with one decimal, by integer arithmetic (`"12.5 %"`); null for whole 0. */
export function formatRatio(part: MicrosInput, whole: MicrosInput): string | null {
  const p = toMicros(part);
  const w = toMicros(whole);
  if (w === 0n) return null;
  const perMille = (p * 1000n + w / 2n) / w;
  return `${perMille / 10n}.${perMille % 10n} %`;
}

/**
 * Micro-units rounded half away from zero to `digits` fraction digits (0-6), as an exact decimal string
 * with exactly that many digits: `roundedDecimal(153058n, 4)` -> `"0.1531"`. BigInt throughout.
 */
export function roundedDecimal(value: MicrosInput, digits: number): string {
  const micros = toMicros(value);
  const step = 10n ** BigInt(6 - digits);
  const negative = micros < 0n;
  const abs = negative ? -micros : micros;
  const rounded = ((abs + step / 2n) / step) * step;
  const units = rounded / MICROS_PER_UNIT;
  const fraction = (rounded % MICROS_PER_UNIT).toString().padStart(6, '0').slice(0, digits);
  const sign = negative && rounded !== 0n ? '-' : '';
  return digits === 0 ? `${sign}${units}` : `${sign}${units}.${fraction}`;
}

const fixedFormatters = new Map<string, Intl.NumberFormat>();

/** Micro-units as currency at a fixed precision (`$0.2813`, `$1,200.0000`): one column reads alike. */
export function formatMoneyFixed(value: MicrosInput, currency: string, digits: number, locale?: string): string {
  const key = `${locale ?? ''}|${currency}|${digits}`;
  let f = fixedFormatters.get(key);
  if (!f) {
    f = new Intl.NumberFormat(locale, {
      style: 'currency',
      currency,
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    });
    fixedFormatters.set(key, f);
  }
  return f.format(roundedDecimal(value, digits) as unknown as number);
}

const countFormat = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });

/** An integer count with thousands separators (`12,345`); exact for BigInt and string input too. */
export function formatCount(value: bigint | number | string): string {
  return countFormat.format(String(value) as unknown as number);
}

/** `+12.5 %`, `-3.0 %`, or `new` when the previous period had no spend: integer arithmetic on micro-units. */
export function formatChange(now: MicrosInput, before: MicrosInput): string {
  const n = toMicros(now);
  const b = toMicros(before);
  if (b === 0n) return n === 0n ? 'No change' : 'New spend';
  const ratio = formatRatio(n > b ? n - b : b - n, b);
  return `${n >= b ? '+' : '−'}${ratio}`;
}
