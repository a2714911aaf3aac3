/** The value of a named field in an outbox entry's flat `[field, value, ...]` list; null without it. */
export function entryField(fields: readonly string[], name: string): string | null {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return null;
}

/** A named field of an outbox entry parsed as JSON: absent, its value, or why it is not JSON. */
export type EntryJson = { absent: true } | { absent?: never; json: unknown } | { absent?: never; problem: string };

/** Reads a named field of an outbox entry as JSON (the way both entry kinds carry their payload). */
export function entryJson(fields: readonly string[], name: string): EntryJson {
  const value = entryField(fields, name);
  if (value === null) return { absent: true };
  try {
    return { json: JSON.parse(value) as unknown };
  } catch (err) {
    return { problem: `the "${name}" field is not JSON: ${(err as Error).message}` };
  }
}
