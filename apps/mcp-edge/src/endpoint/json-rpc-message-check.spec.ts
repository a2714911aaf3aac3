import { describe, expect, it } from 'vitest';
import { jsonRpcRefusal } from './json-rpc-message-check';

const request = (id: unknown, method = 'tools/call') => ({ jsonrpc: '2.0', id, method, params: {} });

describe('jsonRpcRefusal (bodies the edge refuses before serving them)', () => {
  it('should refuse an empty batch', () => {
    expect(jsonRpcRefusal([])).toEqual({ code: -32600, message: 'Invalid Request: an empty batch', id: null });
  });

  it('should refuse a batch that uses one request id twice, naming it', () => {
    expect(jsonRpcRefusal([request(7), request(8), request(7, 'tools/list')])?.message).toBe(
      'Invalid Request: the batch uses the request id 7 more than once',
    );
    expect(jsonRpcRefusal([request('a'), request('a')])?.message).toMatch(/"a"/);
  });

  it('should refuse params that are not an object with -32602, keeping the id of a single request', () => {
    expect(jsonRpcRefusal({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: 'fx__ping' })).toEqual({
      code: -32602,
      message: 'Invalid params: the params of the message ("tools/call") must be an object',
      id: 3,
    });
    expect(jsonRpcRefusal([request(1), { jsonrpc: '2.0', id: 2, method: 'tools/list', params: [1] }])).toMatchObject({
      code: -32602,
      id: null,
      message: expect.stringMatching(/message 1 of the batch/),
    });
  });

  it('should refuse what is not JSON-RPC 2.0 with -32600', () => {
    for (const body of [
      42,
      'x',
      null,
      [1],
      { id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: { x: 1 }, method: 'ping' },
      { jsonrpc: '2.0', id: 1, method: 7 },
      { jsonrpc: '2.0' },
    ]) {
      expect(jsonRpcRefusal(body)?.code).toBe(-32600);
    }
  });

  it('should accept requests, notifications, responses, distinct ids and ids equal only as text', () => {
    expect(jsonRpcRefusal(request(1))).toBeNull();
    expect(jsonRpcRefusal({ jsonrpc: '2.0', method: 'notifications/initialized' })).toBeNull();
    expect(
      jsonRpcRefusal([request(1), request(2), { jsonrpc: '2.0', method: 'notifications/initialized' }]),
    ).toBeNull();
    expect(jsonRpcRefusal([request(1), request('1')])).toBeNull();
    expect(jsonRpcRefusal([{ jsonrpc: '2.0', id: 1, result: {} }, request(1)])).toBeNull();
  });
});
