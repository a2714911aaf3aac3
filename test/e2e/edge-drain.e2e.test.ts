import http from 'node:http';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { QueueName } from '@tollgate/queue';
import { waitForJobs } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, STANDARD_FIXTURE_TOOLS, startFixtureServer } from '../fixtures/http-fixture-server';
import { EdgeProcess, startEdgeProcess } from '../support/edge-process';
import { RunningPlatform, startPlatform } from '../support/platform';

// Far longer than the test needs: the drain ends once nothing is in flight (the test holds three
// calls until it has seen what it checks), so no step races the deadline on a loaded machine.
const DEADLINE_SECONDS = 30;

/** Calls of the fixture's `held` tool answer once the test releases them. */
let releaseHeld: () => void = () => undefined;
const held = new Promise<void>((resolve) => (releaseHeld = resolve));
const DRAIN_FIXTURE_TOOLS = [
  ...STANDARD_FIXTURE_TOOLS,
  {
    definition: {
      name: 'held',
      description: 'Answers once the test lets it.',
      inputSchema: { type: 'object' as const, properties: {} },
    },
    run: async () => {
      await held;
      return { content: [{ type: 'text' as const, text: 'done' }] };
    },
  },
];

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** A POST on `agent` (node:http, so the `Connection` header of the answer can be read). */
function post(port: number, agent: http.Agent, secret: string, body: unknown, headers: Record<string, string> = {}) {
  return new Promise<Answer>((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method: 'POST',
        agent,
        headers: {
          Authorization: `Bearer ${secret}`,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/**
 * The edge as production runs it (its own process, main.ts), drained by SIGTERM under load:
 * readiness fails and an open GET stream is told to reconnect and ended while calls are still in
 * flight, answers carry `Connection: close`, the calls in flight finish, every answered call
 * reaches the ledger, and the process exits having drained before SHUTDOWN_DEADLINE_SECONDS. Its
 * logs are JSON lines that never hold the key.
 */
describe('edge drain on SIGTERM, and its structured logs (edge in its own process)', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let fixture: FixtureServer;
  let edge: EdgeProcess;
  let port: number;
  let keySecret: string;
  let exited: EdgeProcess['exited'];
  let lines: string[] = [];

  beforeAll(async () => {
    p = await startPlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    fixture = await startFixtureServer(DRAIN_FIXTURE_TOOLS);
    const orgId = (await p.admin('POST', '/v1/orgs', { name: 'Acme', slug: 'acme' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'u@acme.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    keySecret = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'agent' })).body.secret;
    const upstream = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'fixture',
      transport: 'STREAMABLE_HTTP',
      url: fixture.url,
    });
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstream.body.id}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['fixture:*'], deny: [] });
    await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
      upstreamId: upstream.body.id,
      toolPattern: '*',
      perCallMicros: 1000,
    });

    edge = await startEdgeProcess({
      ...p.env.vars,
      EDGE_ACCESS_LOG_SAMPLE: '1',
      SHUTDOWN_DEADLINE_SECONDS: String(DEADLINE_SECONDS),
    });
    ({ port, lines, exited } = edge);
  });

  afterAll(async () => {
    if (edge && edge.child.exitCode === null) edge.child.kill('SIGKILL');
    await db?.$disconnect();
    await fixture?.close();
    await p?.close();
  });

  it('should write JSON lines with app, level, time, request id, call id, org and key, and never the key', async () => {
    const agent = new http.Agent({ keepAlive: true });
    const answer = await post(
      port,
      agent,
      keySecret,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'fixture__ping', arguments: {} } },
      { 'x-request-id': 'req-log-check-1' },
    );
    expect(answer.status).toBe(200);
    const callId = answer.body.result._meta['tollgate/call'].callId as string;
    // A wrong key, too: refused, and its secret is not written either.
    const refused = await post(port, agent, 'tg_wrong_secret_that_must_not_be_logged', {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/list',
    });
    expect(refused.status).toBe(401);
    agent.destroy();
    await expect.poll(() => lines.some((l) => l.includes(callId)), { timeout: 5000 }).toBe(true);

    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const line of parsed) {
      expect(line).toMatchObject({ app: 'edge' });
      expect(typeof line.level).toBe('string');
      expect(Number.isNaN(Date.parse(String(line.time)))).toBe(false);
    }
    const access = parsed.find((l) => l.callId === callId);
    expect(access).toMatchObject({
      context: 'Access',
      method: 'tools/call',
      tool: 'fixture__ping',
      upstream: 'fixture',
      outcome: 'OK',
      costMicros: '1000',
      requestId: 'req-log-check-1',
    });
    expect(access!.orgId).toEqual(expect.any(String));
    expect(access!.keyId).toEqual(expect.any(String));
    expect(access!.latencyMs).toEqual(expect.any(Number));
    const all = lines.join('\n');
    expect(all).not.toContain(keySecret);
    expect(all).not.toContain('tg_wrong_secret_that_must_not_be_logged');
  });

  it('should drain on SIGTERM within the deadline with every answered call in the ledger', async () => {
    const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 8 });
    // A session with an open GET stream (the notification stream an agent keeps open).
    const init = await post(port, keepAlive, keySecret, {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'drain-test', version: '1' } },
    });
    const sessionId = init.headers['mcp-session-id'] as string;
    expect(sessionId).toBeTruthy();
    const stream = new Promise<string | Error>((resolve) => {
      http
        .get(
          {
            host: '127.0.0.1',
            port,
            path: '/mcp',
            agent: false,
            headers: { Authorization: `Bearer ${keySecret}`, Accept: 'text/event-stream', 'Mcp-Session-Id': sessionId },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (text += c));
            res.on('end', () => resolve(text));
            res.on('error', resolve);
          },
        )
        .on('error', resolve);
    });

    let id = 100;
    const answered: string[] = [];
    const closeHeaders: string[] = [];
    let drainSeen = false;
    const call = async (name: string, args: Record<string, unknown> = {}, agent = keepAlive) => {
      const sentAfterDrain = drainSeen;
      const a = await post(port, agent, keySecret, {
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name, arguments: args },
      });
      if (a.status === 200 && a.body?.result?._meta?.['tollgate/call']) {
        answered.push(a.body.result._meta['tollgate/call'].callId);
        if (sentAfterDrain) closeHeaders.push(String(a.headers.connection));
      }
      return a;
    };
    // Eight agents calling back to back until the test stops them or the edge stops answering.
    let stopLoops = false;
    const loops = Array.from({ length: 8 }, async () => {
      while (!stopLoops) {
        try {
          await call('fixture__ping');
        } catch {
          return;
        }
      }
    });
    await expect.poll(() => answered.length, { timeout: 30_000 }).toBeGreaterThan(20);
    // Three calls in flight when the signal comes, held by the upstream (which has all three) until
    // the test has seen the drain begin: what it checks meanwhile happens while calls are in flight.
    const heldAgent = new http.Agent({ keepAlive: true });
    let heldAnswered = 0;
    const heldCalls = [1, 2, 3].map(() =>
      call('fixture__held', {}, heldAgent)
        .catch((err: Error) => ({ status: 0, error: err.message }))
        .finally(() => heldAnswered++),
    );
    await expect.poll(() => fixture.calls.filter((c) => c.tool === 'held').length, { interval: 10 }).toBe(3);

    edge.child.kill('SIGTERM');
    // Readiness fails while the drain waits for the calls (a fresh connection each probe, as a kubelet's).
    await expect
      .poll(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.status, { interval: 10 })
      .toBe(503);
    drainSeen = true;
    // A call sent now is still answered, on a connection closed after it.
    const late = await call('fixture__ping');
    expect(late.status).toBe(200);
    expect(late.headers.connection).toBe('close');
    // The open stream is told to reconnect and ended by the drain, not by the exit.
    const text = await stream;
    if (text instanceof Error) throw text;
    expect(text).toContain('retry:');
    expect(heldAnswered).toBe(0);

    // Nothing left in flight but the held calls: once answered, the drain ends.
    stopLoops = true;
    await Promise.all(loops);
    releaseHeld();
    const heldAnswers = await Promise.all(heldCalls);
    for (const a of heldAnswers) expect(a.status).toBe(200);
    const { code } = await exited;
    expect(code).toBe(0);
    // Drained before the deadline: nothing was still in flight when it came.
    expect(lines.filter((l) => l.includes('deadline reached') || l.includes('did not finish before'))).toEqual([]);
    expect(closeHeaders.length).toBeGreaterThan(0);
    expect(closeHeaders.every((h) => h === 'close')).toBe(true);
    keepAlive.destroy();
    heldAgent.destroy();

    // 0 answered calls unbilled: each one reaches the ledger (through the outbox and the worker).
    await expect
      .poll(() => db.usageEvent.count({ where: { id: { in: answered } } }), { timeout: 30_000, interval: 250 })
      .toBe(answered.length);
    expect(lines.some((l) => l.includes('"msg":"drained"'))).toBe(true);
  });
});
