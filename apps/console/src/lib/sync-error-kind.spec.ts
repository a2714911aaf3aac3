import { describe, expect, it } from 'vitest';
import { syncErrorKind } from './sync-error-kind';

describe('syncErrorKind', () => {
  it('should name the class of each reason the catalog sync records', () => {
    const cases: [string, string][] = [
      [
        "10.0.0.5 is a private address: Tollgate makes no requests to private addresses on a tenant's behalf (OUTBOUND_ADDRESS_REFUSED); an operator can allow the range with OUTBOUND_ALLOW_CIDRS",
        'Address refused',
      ],
      ["the upstream refused Tollgate's credentials (HTTP 401)", 'Credentials refused'],
      [
        'no user has connected an account yet (per-user OAuth): the catalog is read once someone connects',
        'Waiting for a user to connect',
      ],
      ['the upstream did not answer in time', 'Timed out'],
      ['could not reach the upstream (ECONNREFUSED)', 'Unreachable'],
      ['the upstream answered HTTP 502', 'HTTP error'],
      ["the upstream's answer is not a valid MCP message", 'Protocol error'],
      ['the upstream closed the connection', 'Protocol error'],
      ['the sync failed (TypeError)', 'Sync failed'],
    ];
    for (const [message, kind] of cases) expect(syncErrorKind(message), message).toBe(kind);
  });
});
