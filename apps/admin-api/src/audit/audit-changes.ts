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
