/** `{ field: { from, to } }` for each field that changed. */
export function changes<T extends object>(
  before: T,
  after: T,
  fields: (keyof T & string)[],
): Record<string, { from: unknown; to: unknown }> {
  const out: Record<string, { from: unknown; to: unknown }> = {};
  for (const f of fields) {
    if (JSON.stringify(before[f]) !== JSON.stringify(after[f])) out[f] = { from: before[f], to: after[f] };
  }
  return out;
}

/** One field of a change as the audit log shows it; `before` undefined: the trail does not know it. */
export interface FieldChange {
  field: string;
  before?: unknown;
  after?: unknown;
}

type Details = Record<string, unknown>;

/** Bookkeeping fields every view carries: not what anyone changed. */
const NOT_A_CHANGE = new Set(['id', 'orgId', 'createdAt', 'updatedAt', 'version']);

const isObject = (v: unknown): v is Details => !!v && typeof v === 'object' && !Array.isArray(v);

/** Details written by `changes()`: every field a `{ from, to }` pair. */
function isFromTo(d: Details): d is Record<string, { from: unknown; to: unknown }> {
  const values = Object.values(d);
  return values.length > 0 && values.every((v) => isObject(v) && 'from' in v && 'to' in v);
}

/** What a row's details say the target looked like after it (the `to` side of from/to details). */
function stateOf(d: Details): Details {
  return isFromTo(d) ? Object.fromEntries(Object.entries(d).map(([k, v]) => [k, v.to])) : d;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Before and after of one audit row, field by field. Rows written with from/to pairs say both. A row that
 * records the target's state (most creations and updates) is compared with the state the previous row of
 * the same target recorded: the fields that differ, or, with no previous row, every field as new. A
 * deletion or revocation shows what it removed. Secrets never reach details, so never reach this.
 */
export function fieldChanges(action: string, details: unknown, previous: unknown): FieldChange[] {
  if (!isObject(details)) return [];
  if (isFromTo(details)) {
    return Object.entries(details).map(([field, v]) => ({ field, before: v.from, after: v.to }));
  }
  const fields = Object.keys(details).filter((f) => !NOT_A_CHANGE.has(f));
  if (/\.(deleted|removed)$/.test(action))
    return fields.map((field) => ({ field, before: details[field], after: null }));
  if (!isObject(previous) || /\.created$/.test(action)) {
    return fields.map((field) => ({ field, before: null, after: details[field] }));
  }
  const before = stateOf(previous);
  return fields
    .filter((f) => !(f in before) || !same(before[f], details[f]))
    .map((field) =>
      field in before ? { field, before: before[field], after: details[field] } : { field, after: details[field] },
    );
}
