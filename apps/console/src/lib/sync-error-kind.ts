/**
 * The class of a sync failure, for a label beside `lastSyncError`. The API already keeps only a
 * classified reason (the outbound rule, an HTTP status, an MCP or network code), never the
 * upstream's own text; this names which kind it is.
 */
export function syncErrorKind(message: string): string {
  if (/addresses on a tenant|must use http|must not contain credentials|absolute http/i.test(message))
    return 'Address refused';
  if (/credentials/i.test(message)) return 'Credentials refused';
  if (/no user has connected/i.test(message)) return 'Waiting for a user to connect';
  if (/did not answer in time/i.test(message)) return 'Timed out';
  if (/could not reach|resolves to no address/i.test(message)) return 'Unreachable';
  if (/answered HTTP/i.test(message)) return 'HTTP error';
  if (/MCP|closed the connection/i.test(message)) return 'Protocol error';
  return 'Sync failed';
}
