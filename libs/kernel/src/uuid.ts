/**
 * A UUID in its canonical text form (any version, either case): what Postgres' `uuid` columns
 * accept. Checked before an id reaches a query, so a malformed one is a 400 naming its field (or a
 * plain "not found"), never a database error.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string | undefined | null): value is string {
  return typeof value === 'string' && UUID.test(value);
}
