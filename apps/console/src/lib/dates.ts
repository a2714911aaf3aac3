/** Calendar days (`YYYY-MM-DD`) and timestamps as seen in the organisation's time zone. */

const dayFormatters = new Map<string, Intl.DateTimeFormat>();

/** The calendar day `at` falls on in `timeZone`. */
export function dayIn(timeZone: string, at: Date = new Date()): string {
  let f = dayFormatters.get(timeZone);
  if (!f) {
    // en-CA writes dates as YYYY-MM-DD.
    f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    dayFormatters.set(timeZone, f);
  }
  return f.format(at);
}

/** `2026-11-23` plus `n` days (calendar arithmetic, no time zone involved). */
export function addDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

/** The first day of the month `day` is in. */
export function monthStart(day: string): string {
  return `${day.slice(0, 8)}01`;
}

/** Every day from `from` to `to`, inclusive. */
export function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = from; d <= to && out.length < 3660; d = addDays(d, 1)) out.push(d);
  return out;
}

export function isDay(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`));
}

// Making an Intl.DateTimeFormat costs far more than using one: a table of 1,000 keys made 3,000.
const TIMESTAMP_FORMATS = new Map<string, Intl.DateTimeFormat>();

/** A timestamp in the org's zone, e.g. `23 Nov 2026, 14:05 (Europe/Paris)`. */
export function formatTimestamp(value: string | Date | null | undefined, timeZone: string, locale?: string): string {
  if (value === null || value === undefined) return '—';
  const d = typeof value === 'string' ? new Date(value) : value;
  const id = `${locale ?? ''}|${timeZone}`;
  let format = TIMESTAMP_FORMATS.get(id);
  if (!format) {
    format = new Intl.DateTimeFormat(locale, { timeZone, dateStyle: 'medium', timeStyle: 'short' });
    TIMESTAMP_FORMATS.set(id, format);
  }
  return format.format(d);
}

/** A calendar day for reading, e.g. `Mon, 23 Nov 2026`. */
export function formatDay(day: string, locale?: string): string {
  return new Intl.DateTimeFormat(locale, {
    timeZone: 'UTC',
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
  }).format(new Date(`${day}T00:00:00Z`));
}

const SORTABLE_FORMATS = new Map<string, Intl.DateTimeFormat>();

/** An instant as `2026-11-26 00:30:05` in `timeZone`: sortable text for files. */
export function sortableTimestamp(value: string | Date, timeZone: string): string {
  let format = SORTABLE_FORMATS.get(timeZone);
  if (!format) {
    // Swedish writes dates and times in ISO order.
    format = new Intl.DateTimeFormat('sv-SE', { timeZone, dateStyle: 'short', timeStyle: 'medium' });
    SORTABLE_FORMATS.set(timeZone, format);
  }
  return format.format(typeof value === 'string' ? new Date(value) : value);
}
