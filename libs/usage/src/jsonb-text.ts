/** `\u0000` escapes, not an escaped backslash followed by "u0000". */
const ESCAPED_NUL = /(?<!\\)((?:\\\\)*)\\u0000/g;
/** JSON.stringify writes exactly the lone surrogates as `\udXXX` escapes (a pair is written as is). */
const ESCAPED_LONE_SURROGATE = /(?<!\\)((?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/g;

/**
 * A value as JSON that Postgres jsonb takes. jsonb refuses `\u0000` and lone surrogates, and
 * JSON.stringify writes both as escapes; an agent can put either in a tool name or its arguments.
 * NUL is dropped, and a lone surrogate becomes U+FFFD, as a UTF-8 encoder writes it.
 */
export function jsonbText(value: unknown): string {
  let json = JSON.stringify(value);
  if (json.includes('\\u0000')) json = json.replace(ESCAPED_NUL, '$1');
  if (json.includes('\\ud')) json = json.replace(ESCAPED_LONE_SURROGATE, '$1\\ufffd');
  return json;
}
