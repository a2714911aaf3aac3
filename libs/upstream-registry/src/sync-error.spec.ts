import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { OutboundAddressRule, OutboundGuard } from '@tollgate/outbound';
import { describe, expect, it } from 'vitest';
import { CatalogException, CatalogExceptionCode } from './catalog.exception';
import { syncErrorMessage } from './sync-error';

const SECRET = 'root:x:0:0 internal admin console';

describe('syncErrorMessage', () => {
  it.each([
    [
      'an HTTP error with a body',
      new StreamableHTTPError(500, `Error POSTing to endpoint: ${SECRET}`),
      'the upstream answered HTTP 500',
    ],
    [
      'a refused credential',
      new StreamableHTTPError(401, `Error POSTing to endpoint: ${SECRET}`),
      "the upstream refused Tollgate's credentials (HTTP 401)",
    ],
    [
      'an unexpected content type',
      new StreamableHTTPError(-1, `Unexpected content type: text/html; ${SECRET}`),
      "the upstream's answer is not MCP over Streamable HTTP",
    ],
    ['an SSE error', new SseError(502, SECRET, undefined as never), 'the upstream answered HTTP 502'],
    [
      'an MCP error',
      new McpError(ErrorCode.InternalError, SECRET),
      'the upstream answered MCP error -32603 (InternalError)',
    ],
    ['a timeout', new McpError(ErrorCode.RequestTimeout, SECRET), 'the upstream did not answer in time'],
    [
      'a refused connection',
      Object.assign(new Error(`connect ECONNREFUSED 10.0.0.1:80 ${SECRET}`), { code: 'ECONNREFUSED' }),
      'could not reach the upstream (ECONNREFUSED)',
    ],
    [
      'a wrapped network error',
      new TypeError('fetch failed', { cause: Object.assign(new Error(SECRET), { code: 'ENOTFOUND' }) }),
      'could not reach the upstream (ENOTFOUND)',
    ],
    [
      'a bad JSON answer',
      new SyntaxError(`Unexpected token < in JSON: ${SECRET}`),
      "the upstream's answer is not a valid MCP message",
    ],
    ['anything else', new Error(SECRET), 'the sync failed (Error)'],
  ])('should keep only a classified reason for %s', (_kind, err, expected) => {
    const message = syncErrorMessage(err);
    expect(message).toBe(expected);
    expect(message).not.toContain('root:x');
  });

  it('should name the outbound rule when the address was refused, even behind fetch failed', async () => {
    const guard = new OutboundGuard(new OutboundAddressRule(), async () => [{ address: '127.0.0.1', family: 4 }]);
    const refused = await guard.addressesFor('internal.example').catch((e: unknown) => e);
    expect(syncErrorMessage(new TypeError('fetch failed', { cause: refused }))).toBe(
      "internal.example resolves to 127.0.0.1, a loopback address: Tollgate makes no requests to loopback addresses on a tenant's behalf (OUTBOUND_ADDRESS_REFUSED); an operator can allow the range with OUTBOUND_ALLOW_CIDRS",
    );
  });

  it('should keep our own reasons', () => {
    expect(
      syncErrorMessage(new CatalogException(CatalogExceptionCode.SyncFailed, 'no user has connected an account yet')),
    ).toBe('no user has connected an account yet');
  });
});
