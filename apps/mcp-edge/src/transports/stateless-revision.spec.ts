import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  StatelessRevisionError,
  checkParamHeaders,
  checkStatelessEnvelope,
  completeResult,
  isStatelessRevisionRequest,
  logWanted,
} from './stateless-revision';

const META = 'io.modelcontextprotocol/';
const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
const body = (
  method: string,
  params: Record<string, unknown> = {},
  meta: Record<string, unknown> = { [`${META}protocolVersion`]: '2026-07-28', [`${META}clientCapabilities`]: {} },
) => ({
  jsonrpc: '2.0',
  id: 7,
  method,
  params: { ...params, _meta: meta },
});
const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return { status: (err as StatelessRevisionError).status, code: (err as StatelessRevisionError).code };
  }
  return null;
};

describe('stateless revision envelope', () => {
  const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' };

  it('should take a request of 2026-07-28 by its header or its own methods, and leave 2025-11-25 alone', () => {
    expect(isStatelessRevisionRequest(req({ 'mcp-protocol-version': '2026-07-28' }), body('tools/list'))).toBe(true);
    expect(isStatelessRevisionRequest(req({}), body('server/discover'))).toBe(true);
    expect(isStatelessRevisionRequest(req({ 'mcp-protocol-version': '2025-11-25' }), body('tools/call'))).toBe(false);
    expect(isStatelessRevisionRequest(req({}), body('tools/call'))).toBe(false);
  });

  it('should accept a request whose headers and _meta match its body', () => {
    const checked = checkStatelessEnvelope(
      req(headers),
      body(
        'tools/call',
        { name: 'echo' },
        {
          [`${META}protocolVersion`]: '2026-07-28',
          [`${META}clientCapabilities`]: { sampling: {} },
          [`${META}logLevel`]: 'info',
        },
      ),
    );
    expect(checked).toMatchObject({
      id: 7,
      method: 'tools/call',
      clientCapabilities: { sampling: {} },
      logLevel: 'info',
    });
  });

  it('should refuse mismatched routing headers, a missing _meta, another version and removed methods', () => {
    expect(
      refusal(() =>
        checkStatelessEnvelope(req({ ...headers, 'mcp-method': 'tools/list' }), body('tools/call', { name: 'echo' })),
      ),
    ).toEqual({ status: 400, code: -32020 });
    expect(
      refusal(() =>
        checkStatelessEnvelope(req({ ...headers, 'mcp-name': 'other' }), body('tools/call', { name: 'echo' })),
      ),
    ).toEqual({ status: 400, code: -32020 });
    expect(refusal(() => checkStatelessEnvelope(req(headers), body('tools/call', { name: 'echo' }, {})))).toEqual({
      status: 400,
      code: -32602,
    });
    expect(
      refusal(() =>
        checkStatelessEnvelope(
          req({ ...headers, 'mcp-protocol-version': '2099-01-01' }),
          body('tools/call', { name: 'echo' }),
        ),
      ),
    ).toEqual({ status: 400, code: -32022 });
    expect(refusal(() => checkStatelessEnvelope(req({ ...headers, 'mcp-method': 'ping' }), body('ping')))).toEqual({
      status: 404,
      code: -32601,
    });
    expect(refusal(() => checkStatelessEnvelope(req(headers), [body('tools/list')]))).toEqual({
      status: 400,
      code: -32600,
    });
  });

  it('should check Mcp-Param headers against the arguments a schema marks, plain or Base64', () => {
    const schema = { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } };
    expect(() =>
      checkParamHeaders(req({ 'mcp-param-region': 'eu-west' }), schema, { region: 'eu-west' }),
    ).not.toThrow();
    expect(() =>
      checkParamHeaders(
        req({ 'mcp-param-region': `=?base64?${Buffer.from('eu-west').toString('base64')}?=` }),
        schema,
        { region: 'eu-west' },
      ),
    ).not.toThrow();
    expect(refusal(() => checkParamHeaders(req({}), schema, { region: 'eu-west' }))).toEqual({
      status: 400,
      code: -32020,
    });
    expect(refusal(() => checkParamHeaders(req({ 'mcp-param-region': 'us' }), schema, { region: 'eu-west' }))).toEqual({
      status: 400,
      code: -32020,
    });
    expect(
      refusal(() => checkParamHeaders(req({ 'mcp-param-region': '=?base64?***?=' }), schema, { region: 'eu-west' })),
    ).toEqual({ status: 400, code: -32020 });
  });

  it('should mark results complete and give lists caching hints in a stable order', () => {
    const listed = completeResult('tools/list', { tools: [{ name: 'b' }, { name: 'a' }] });
    expect(listed).toEqual({
      resultType: 'complete',
      tools: [{ name: 'a' }, { name: 'b' }],
      ttlMs: 60_000,
      cacheScope: 'private',
    });
    expect(completeResult('tools/call', { content: [] })).toEqual({ resultType: 'complete', content: [] });
  });

  it('should send log messages only at or above a level the request asked for', () => {
    expect(logWanted('info', undefined)).toBe(false);
    expect(logWanted('info', 'warning')).toBe(false);
    expect(logWanted('error', 'warning')).toBe(true);
  });
});
