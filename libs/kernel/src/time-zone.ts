const SUPPORTED_ZONES = new Set(Intl.supportedValuesOf('timeZone'));
// `Area/Location` (or `Area/Sub/Location`): the shape of an IANA name, so aliases such as
// `Etc/UTC` or `Asia/Kolkata` pass while offsets (`UTC+25`, `+05:00`) and abbreviations do not.
const IANA_NAME_SHAPE = /^[A-Z][A-Za-z_-]*(\/[A-Za-z0-9_+-]+){1,2}$/;

/**
 * An IANA time zone name: `UTC` or a zone the runtime's time-zone database knows by that exact
 * name. Fixed offsets are refused: luxon reads `UTC+25` as a 25-hour offset and would move
 * every month boundary of the org's budgets.
 */
export function isIanaTimeZone(value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 64) return false;
  if (value === 'UTC' || SUPPORTED_ZONES.has(value)) return true;
  if (!IANA_NAME_SHAPE.test(value)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}
