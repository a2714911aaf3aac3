import type { AuditEvent } from '../api/oversight-types';
import { formatMoney, microsToDecimal } from './money';
import type { ShownTable } from './table-csv';

/** Money fields in audit details are micro-units, named `…Micros` (limitMicros, perCallMicros…). */
const isMoneyField = (field: string) => /Micros$/.test(field);

/** `limitMicros` -> `limit`, `perOutputTokenMicros` -> `per output token`: the field as a person reads it. */
export function fieldLabel(field: string): string {
  return field
    .replace(/Micros$/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase();
}

const isMicros = (v: unknown) =>
  (typeof v === 'number' && Number.isSafeInteger(v)) || (typeof v === 'string' && /^-?\d+$/.test(v));

/** One before or after value as the log shows it: money in the org's currency, lists joined, none as a dash. */
export function formatChangeValue(field: string, value: unknown, currency: string): string {
  if (value === undefined) return 'not recorded';
  if (value === null || value === '') return '—';
  if (isMoneyField(field) && isMicros(value)) return formatMoney(value as number | string, currency);
  if (Array.isArray(value)) return value.length === 0 ? '(none)' : value.map((v) => String(v)).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The same value for a file: money as an exact decimal (its currency in its own column), the rest as text. */
function exportValue(field: string, value: unknown): string {
  if (value === undefined || value === null) return '';
  if (isMoneyField(field) && isMicros(value)) return microsToDecimal(value as number | string);
  if (Array.isArray(value)) return value.map((v) => String(v)).join('; ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The person and token behind a row, as the CSV names them. */
function who(e: AuditEvent): [string, string] {
  const u = e.actor?.user;
  return [u ? (u.name ?? u.email) : (e.actor?.ownerLabel ?? e.actor?.tokenName ?? e.actorId), u?.email ?? ''];
}

/**
 * The audit log as CSV: one line per changed field (a change of three fields is three lines with the same
 * event id), so a spreadsheet can filter by field; a change with no field detail is one line. Times are UTC
 * (ISO 8601) and in the org's zone; money is an exact decimal in the org's currency.
 */
export function auditCsv(
  events: AuditEvent[],
  timeZone: string,
  currency: string,
  localTime: (iso: string) => string,
): ShownTable {
  const headers = [
    'Event id',
    'When (UTC)',
    `When (${timeZone})`,
    'Who',
    'Who email',
    'Token',
    'Role',
    'Action',
    'Target type',
    'Target id',
    'Target',
    'Field',
    'Before',
    'After',
    'Currency',
  ];
  const rows = events.flatMap((e) => {
    const [name, email] = who(e);
    const head = [
      e.id,
      new Date(e.createdAt).toISOString(),
      localTime(e.createdAt),
      name,
      email,
      e.actor?.tokenName ?? e.actorId,
      e.actor?.role ?? '',
      e.action,
      e.targetType,
      e.targetId ?? '',
      e.targetName ?? '',
    ];
    const changes = e.changes ?? [];
    if (changes.length === 0) return [[...head, '', '', '', '']];
    return changes.map((c) => [
      ...head,
      c.field,
      exportValue(c.field, c.before),
      exportValue(c.field, c.after),
      isMoneyField(c.field) ? currency : '',
    ]);
  });
  return { headers, rows };
}
