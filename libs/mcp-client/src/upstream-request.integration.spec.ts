import { randomUUID } from 'node:crypto';
import { ErrorCode, ListToolsResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The repo's real upstream fixture lives in test/fixtures, outside every Nx project (as in the pool's own spec).
// eslint-disable-next-line @nx/enforce-module-boundaries
import { FixtureServer, STANDARD_FIXTURE_TOOLS, startFixtureServer } from '../../../test/fixtures/http-fixture-server';
import { UpstreamClientPool } from './upstream-client-pool.service';

describe('UpstreamClientPool.request (resources, prompts, completions and other requests) over Streamable HTTP', () => {
  let fixture: FixtureServer;
  let pool: UpstreamClientPool;
  const spec = () => ({
    id: 'u-' + randomUUID(),
    orgId: randomUUID(),
    namespace: 'fixture',
    transport: 'STREAMABLE_HTTP' as const,
    command: null,
    args: [],
    url: fixture.url,
    headers: {},
    env: {},
    callTimeoutMs: 5_000,
    version: 'v1',
  });

  beforeAll(async () => {
    fixture = await startFixtureServer(STANDARD_FIXTURE_TOOLS, { sessions: true });
    pool = new UpstreamClientPool();
  });

  afterAll(async () => {
    await pool?.onModuleDestroy();
    await fixture?.close();
  });

  it('should set up a new session and answer when the upstream forgot the session', async () => {
    const s = spec();
    expect((await pool.request(s, { method: 'tools/list' }, ListToolsResultSchema)).tools.length).toBeGreaterThan(0);
    const handshakes = fixture.initializations;
    await fixture.forgetSessions();
    expect((await pool.request(s, { method: 'tools/list' }, ListToolsResultSchema)).tools.length).toBeGreaterThan(0);
    expect(fixture.initializations).toBe(handshakes + 1);
  });

  it('should relay an error the upstream answered as its McpError', async () => {
    const err = await pool
      .request(spec(), { method: 'prompts/get', params: { name: 'nope' } }, ListToolsResultSchema)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(ErrorCode.MethodNotFound);
  });
});
