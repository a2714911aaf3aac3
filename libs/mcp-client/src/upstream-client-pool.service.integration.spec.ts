import { randomUUID } from 'node:crypto';
import { getEventListeners } from 'node:events';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResult, ErrorCode, McpError, ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
// The repo's real upstream fixture lives in test/fixtures, outside every Nx project, and libs/testing
// does not export it yet; until it does, this spec imports it by path.
// eslint-disable-next-line @nx/enforce-module-boundaries
import {
  FixtureOptions,
  FixtureServer,
  PROTOCOL_FIXTURE_TOOLS,
  STANDARD_FIXTURE_TOOLS,
  startFixtureServer,
} from '../../../test/fixtures/http-fixture-server';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { startSseFixtureServer } from '../../../test/fixtures/sse-fixture-server';
import { UpstreamClientPool } from './upstream-client-pool.service';
import { connectUpstream } from './upstream-connector';
import { UpstreamException, UpstreamExceptionCode } from './upstream.exception';
import { UpstreamSpec } from './upstream-spec';

const TOOLS = [...STANDARD_FIXTURE_TOOLS, ...PROTOCOL_FIXTURE_TOOLS];

function specFor(fixture: FixtureServer, overrides: Partial<UpstreamSpec> = {}): UpstreamSpec {
  return {
    id: randomUUID(),
    orgId: randomUUID(),
    namespace: 'fixture',
    transport: 'STREAMABLE_HTTP',
    command: null,
    args: [],
    url: fixture.url,
    headers: {},
    env: {},
    callTimeoutMs: 5_000,
    version: 'v1',
    ...overrides,
  };
}

async function upstreamFailureOf(call: Promise<unknown>): Promise<UpstreamException> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UpstreamException);
  return err as UpstreamException;
}

/** The id the upstream saw on the last call: a string means the pool's lean path made it, not the SDK client. */
function lastRequestId(fixture: FixtureServer): unknown {
  return fixture.calls.at(-1)?.requestId;
}

const ANSWER_MODES: { mode: string; options: FixtureOptions }[] = [
  { mode: 'one JSON body', options: {} },
  { mode: 'an event stream', options: { enableJsonResponse: false } },
  { mode: 'an event stream within a session', options: { enableJsonResponse: false, sessions: true } },
];

describe.each(ANSWER_MODES)('UpstreamClientPool over Streamable HTTP, answers as $mode', ({ options }) => {
  let fixture: FixtureServer;
  let pool: UpstreamClientPool;
  let sdk: Client;
  let spec: UpstreamSpec;

  beforeAll(async () => {
    fixture = await startFixtureServer(TOOLS, options);
    pool = new UpstreamClientPool();
    spec = specFor(fixture);
    sdk = await connectUpstream(spec);
  });

  afterAll(async () => {
    await sdk?.close();
    await pool?.onModuleDestroy();
    await fixture?.close();
  });

  it.each([
    ['text', 'ping', {}],
    ['image', 'big-image', {}],
    ['tool error', 'fail', {}],
    ['_meta', 'reported-cost', { costMicros: 4200 }],
    ['structured content', 'structured', {}],
    ['big text', 'huge', { lines: 2000 }],
  ])('should answer a %s result exactly as the SDK client does', async (_kind, tool, args) => {
    const lean = await pool.callTool(spec, tool, args);
    expect(typeof lastRequestId(fixture)).toBe('string');
    const reference = (await sdk.callTool({ name: tool, arguments: args })) as CallToolResult;
    expect(typeof lastRequestId(fixture)).toBe('number');
    expect(lean).toEqual(reference);
  });

  it('should give every concurrent call its own answer, and leave no listener on a signal they share', async () => {
    const caller = new AbortController();
    const costs = Array.from({ length: 40 }, (_, i) => i * 1000);
    const results = await Promise.all(
      costs.map((costMicros) => pool.callTool(spec, 'reported-cost', { costMicros }, caller.signal)),
    );
    expect(results.map((r) => (r._meta?.['tollgate/cost'] as { costMicros: number }).costMicros)).toEqual(costs);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it('should give UPSTREAM_ERROR when the upstream answers a JSON-RPC error', async () => {
    const err = await upstreamFailureOf(pool.callTool(spec, 'protocol-error', {}));
    expect(err.code).toBe(UpstreamExceptionCode.ProtocolError);
    expect(err.message).toContain('the arguments make no sense');
  });

  it('should time out with UPSTREAM_TIMEOUT and tell the upstream to cancel when the call outlasts callTimeoutMs', async () => {
    const impatient = { ...spec, callTimeoutMs: 200 };
    const started = Date.now();
    const err = await upstreamFailureOf(pool.callTool(impatient, 'slow', { ms: 3_000 }));
    expect(err.code).toBe(UpstreamExceptionCode.Timeout);
    expect(Date.now() - started).toBeLessThan(2_000);
    const requestId = lastRequestId(fixture);
    await vi.waitFor(() => expect(fixture.cancellations.map((c) => c.requestId)).toContain(requestId));
  });

  it("should stop when the caller aborts, and leave no listener on the caller's signal", async () => {
    const caller = new AbortController();
    await pool.callTool(spec, 'ping', {}, caller.signal);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);

    setTimeout(() => caller.abort(), 100);
    const err = await upstreamFailureOf(pool.callTool(spec, 'slow', { ms: 3_000 }, caller.signal));
    // The SDK client reports an abort as a request timeout; the code stays what callers know.
    expect(err.code).toBe(UpstreamExceptionCode.Timeout);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    const requestId = lastRequestId(fixture);
    await vi.waitFor(() => expect(fixture.cancellations.map((c) => c.requestId)).toContain(requestId));
  });
});

describe('UpstreamClientPool with an upstream that talks to the client mid-call', () => {
  let fixture: FixtureServer;
  let pool: UpstreamClientPool;
  let sdk: Client;
  let spec: UpstreamSpec;

  beforeAll(async () => {
    fixture = await startFixtureServer(TOOLS, { enableJsonResponse: false, sessions: true, resumable: true });
    pool = new UpstreamClientPool();
    spec = specFor(fixture);
    sdk = await connectUpstream(spec);
  });

  afterAll(async () => {
    await sdk?.close();
    await pool?.onModuleDestroy();
    await fixture?.close();
  });

  it.each([
    ['a log message before the result', 'log-then-answer', 'logged'],
    ['a ping before the result', 'ping-client', 'the client answered ping'],
    ['a request the client has no handler for', 'ask-client', 'the client refused roots/list: -32601'],
  ])('should answer as the SDK client does when the upstream sends %s', async (_case, tool, text) => {
    const lean = await pool.callTool(spec, tool, {});
    expect(typeof lastRequestId(fixture)).toBe('string');
    expect(lean.content).toEqual([{ type: 'text', text }]);
    expect(lean).toEqual(await sdk.callTool({ name: tool, arguments: {} }));
  });

  it('should tell the pool when the upstream announces tools/list_changed on the answer stream', async () => {
    const announced: string[] = [];
    pool.onToolListChanged((s) => announced.push(s.id));
    await pool.callTool(spec, 'announce-list-changed', {});
    expect(typeof lastRequestId(fixture)).toBe('string');
    await vi.waitFor(() => expect(announced).toContain(spec.id));
  });

  it('should come back for the answer when the upstream closes the answer stream after an event id', async () => {
    const result = await pool.callTool(spec, 'come-back-later', { ms: 100 });
    expect(result.content).toEqual([{ type: 'text', text: 'answered on a resumed stream' }]);
  });

  it('should set up a new session and answer when the upstream forgot the session', async () => {
    await pool.callTool(spec, 'ping', {});
    const handshakes = fixture.initializations;
    await fixture.forgetSessions();
    expect((await pool.callTool(spec, 'ping', {})).content).toEqual([{ type: 'text', text: 'pong' }]);
    expect(fixture.initializations).toBe(handshakes + 1);
    expect((await pool.callTool(spec, 'ping', {})).content).toEqual([{ type: 'text', text: 'pong' }]);
    expect(fixture.initializations).toBe(handshakes + 1);
  });
});

describe('UpstreamClientPool credentials and HTTP failures over Streamable HTTP', () => {
  const revoked = new Set<string>();
  let outage: number | undefined;
  let fixture: FixtureServer;
  let pool: UpstreamClientPool;

  beforeAll(async () => {
    fixture = await startFixtureServer(TOOLS, {
      sessions: true,
      intercept: (req, res) => {
        if (outage !== undefined) res.writeHead(outage).end('down for maintenance');
        else if (revoked.has(req.headers.authorization ?? ''))
          res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end();
        else if (req.url === '/moved/mcp') res.writeHead(307, { location: '/mcp' }).end();
        else return false;
        return true;
      },
    });
  });

  afterEach(async () => {
    outage = undefined;
    revoked.clear();
    await pool?.onModuleDestroy();
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it("should send the upstream's static secret header with every call", async () => {
    pool = new UpstreamClientPool();
    const spec = specFor(fixture, { authMode: 'STATIC_SECRET', headers: { 'X-Api-Key': 'static-secret-1' } });
    await pool.callTool(spec, 'ping', {});
    await pool.callTool(spec, 'ping', {});
    expect(typeof lastRequestId(fixture)).toBe('string');
    expect(fixture.calls.slice(-2).map((c) => c.headers['x-api-key'])).toEqual(['static-secret-1', 'static-secret-1']);
  });

  it("should send each user's own Authorization and nobody else's", async () => {
    pool = new UpstreamClientPool();
    const spec = specFor(fixture, { authMode: 'PER_USER_OAUTH' });
    await pool.callTool(spec, 'ping', {}, undefined, {
      key: 'alice',
      headers: { Authorization: 'Bearer alice-token' },
    });
    await pool.callTool(spec, 'ping', {}, undefined, { key: 'bob', headers: { Authorization: 'Bearer bob-token' } });
    expect(fixture.calls.slice(-2).map((c) => c.headers.authorization)).toEqual([
      'Bearer alice-token',
      'Bearer bob-token',
    ]);
  });

  it("should give UPSTREAM_UNAUTHORIZED and drop the user's connection when the upstream refuses their token", async () => {
    pool = new UpstreamClientPool();
    const spec = specFor(fixture, { authMode: 'PER_USER_OAUTH' });
    const alice = { key: 'alice', headers: { Authorization: 'Bearer alice-token' } };
    await pool.callTool(spec, 'ping', {}, undefined, alice);
    const handshakes = fixture.initializations;

    revoked.add('Bearer alice-token');
    const err = await upstreamFailureOf(pool.callTool(spec, 'ping', {}, undefined, alice));
    expect(err.code).toBe(UpstreamExceptionCode.Unauthorized);

    // Her next call starts a new connection rather than reusing the refused one.
    revoked.clear();
    await pool.callTool(spec, 'ping', {}, undefined, alice);
    expect(fixture.initializations).toBe(handshakes + 1);
  });

  it('should give UPSTREAM_UNAVAILABLE with the status when the upstream answers an HTTP error', async () => {
    pool = new UpstreamClientPool();
    const spec = specFor(fixture);
    await pool.callTool(spec, 'ping', {});
    outage = 503;
    const err = await upstreamFailureOf(pool.callTool(spec, 'ping', {}));
    expect(err.code).toBe(UpstreamExceptionCode.Unavailable);
    expect(err.message).toContain('HTTP 503');
  });

  it('should follow a same-origin redirect as the SDK client does', async () => {
    pool = new UpstreamClientPool();
    const spec = specFor(fixture, { url: fixture.url.replace('/mcp', '/moved/mcp') });
    expect((await pool.callTool(spec, 'ping', {})).content).toEqual([{ type: 'text', text: 'pong' }]);
    // The SDK client, which follows it, made the call.
    expect(typeof lastRequestId(fixture)).toBe('number');
    expect((await pool.callTool(spec, 'ping', {})).content).toEqual([{ type: 'text', text: 'pong' }]);
  });

  it('should give UPSTREAM_UNAVAILABLE when the upstream is gone', async () => {
    const gone = await startFixtureServer(TOOLS);
    pool = new UpstreamClientPool();
    const spec = specFor(gone);
    await pool.callTool(spec, 'ping', {});
    await gone.close();
    const err = await upstreamFailureOf(pool.callTool(spec, 'ping', {}));
    expect(err.code).toBe(UpstreamExceptionCode.Unavailable);
  });
});

// The breaker is shared by every key of every organisation: what one caller makes the upstream answer must not open it.
describe.each([
  ...ANSWER_MODES.map(({ mode, options }) => ({ mode: `Streamable HTTP, ${mode}`, options, sse: false })),
  { mode: 'HTTP+SSE (the SDK client)', options: {}, sse: true },
])('UpstreamClientPool circuit breaker over $mode', ({ options, sse }) => {
  let close: () => Promise<void>;
  let spec: UpstreamSpec;

  beforeAll(async () => {
    if (sse) {
      const server = await startSseFixtureServer(TOOLS);
      close = () => server.close();
      spec = { ...specFor({ url: `${server.url}` } as FixtureServer), transport: 'SSE' };
    } else {
      const fixture = await startFixtureServer(TOOLS, options);
      close = () => fixture.close();
      spec = specFor(fixture);
    }
  });

  afterAll(async () => {
    await close?.();
  });

  it.each([
    ['-32000 (the code the SDK uses for a closed connection)', ErrorCode.ConnectionClosed],
    ['-32001 (the code the SDK uses for a timeout)', ErrorCode.RequestTimeout],
  ])('should not open for other callers when the upstream answers %s five times and more', async (_name, code) => {
    const pool = new UpstreamClientPool();
    try {
      for (let i = 0; i < 7; i++) {
        const err = await upstreamFailureOf(pool.callTool(spec, 'protocol-error', { code }));
        // The caller's own result: the upstream's answer, not a failure of the upstream.
        expect(err.code).toBe(UpstreamExceptionCode.ProtocolError);
        expect(err.message).toContain('the arguments make no sense');
      }
      for (let i = 0; i < 7; i++) {
        const err = await pool
          .request(
            spec,
            { method: 'tools/call', params: { name: 'protocol-error', arguments: { code } } },
            ResultSchema,
          )
          .then(
            () => undefined,
            (e: unknown) => e,
          );
        expect(err).toBeInstanceOf(McpError);
        expect((err as McpError).code).toBe(code);
      }
      // Another key's call to the same upstream still goes through.
      expect((await pool.callTool(spec, 'ping', {})).content).toEqual([{ type: 'text', text: 'pong' }]);
    } finally {
      await pool.onModuleDestroy();
    }
  });
});
