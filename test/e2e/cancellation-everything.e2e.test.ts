import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Progress } from '@modelcontextprotocol/sdk/types.js';
import { PrismaClient } from '@prisma/client';
import { PrismaPg } from '@prisma/adapter-pg';
import { QueueName } from '@tollgate/queue';
import { SERVER_EVERYTHING, connectAgent, waitForJobs } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunningPlatform, startPlatform } from '../support/platform';

const REPO_ROOT = path.resolve(__dirname, '../..');
const TOOL = 'trigger-long-running-operation';
type Message = { id?: string | number; method?: string; params?: Record<string, any>; result?: unknown };

/**
 * An agent's cancellation stops a long-running call of the reference server-everything, over stdio
 * and over Streamable HTTP: the upstream hears notifications/cancelled for the request the edge
 * sent it, never answers it, the agent hears no more progress, and the ledger says the call failed.
 */
describe('cancellation through the edge to server-everything', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let orgId: string;
  let teamId: string;
  let userId: string;
  let dir: string;
  let everythingHttp: ChildProcess | undefined;
  let proxy: http.Server | undefined;
  /** What the Streamable HTTP upstream was sent and answered, through the recording proxy. */
  const httpSent: Message[] = [];
  const httpAnswered: string[] = [];
  const agents: Client[] = [];

  const linesOf = (file: string): Message[] =>
    existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Message)
      : [];

  async function agentFor(name: string): Promise<{ agent: Client; keyId: string }> {
    const key = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name })).body;
    const agent = await connectAgent(p.edgeUrl, key.secret);
    agents.push(agent);
    return { agent, keyId: key.key.id };
  }

  /** Starts the long call, waits for its first progress, cancels it; returns what the agent saw after. */
  async function cancelAfterFirstProgress(
    agent: Client,
    tool: string,
  ): Promise<{ error: unknown; progressAfterCancel: Progress[] }> {
    const cancel = new AbortController();
    const progress: Progress[] = [];
    let cancelled = false;
    const afterCancel: Progress[] = [];
    let firstProgress!: () => void;
    const first = new Promise<void>((r) => (firstProgress = r));
    const call = agent
      .callTool({ name: tool, arguments: { duration: 3, steps: 6 } }, undefined, {
        signal: cancel.signal,
        onprogress: (x) => {
          progress.push(x);
          if (cancelled) afterCancel.push(x);
          firstProgress();
        },
      })
      .then(
        () => new Error('the call was answered'),
        (err: unknown) => err,
      );
    await first;
    cancelled = true;
    cancel.abort('the user stopped it'); // the SDK client sends notifications/cancelled
    return { error: await call, progressAfterCancel: afterCancel };
  }

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-cancel-'));
    const upstreamPort = await freePort();
    everythingHttp = spawn(
      process.execPath,
      [`${REPO_ROOT}/node_modules/@modelcontextprotocol/server-everything/dist/index.js`, 'streamableHttp'],
      {
        env: { ...process.env, PORT: String(upstreamPort) },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    await new Promise<void>((resolve, reject) => {
      everythingHttp!.stderr!.on('data', (d: Buffer) =>
        d.toString().includes('listening on port') ? resolve() : undefined,
      );
      everythingHttp!.once('exit', (code) => reject(new Error(`server-everything exited with ${code}`)));
    });
    proxy = recordingProxy(upstreamPort, httpSent, httpAnswered);
    proxy.listen(0, '127.0.0.1');
    await once(proxy, 'listening');
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}/mcp`;

    p = await startPlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Cancel', slug: 'cancel' })).body.id;
    teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'c@cancel.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['local:*', 'web:*'], deny: [] });
    const tapped = {
      command: process.execPath,
      args: [
        path.join(REPO_ROOT, 'test/fixtures/stdio-tap.mjs'),
        path.join(dir, 'stdio'),
        SERVER_EVERYTHING.command,
        ...SERVER_EVERYTHING.args,
      ],
    };
    for (const upstream of [
      { namespace: 'local', transport: 'STDIO', ...tapped, callTimeoutMs: 30_000 },
      { namespace: 'web', transport: 'STREAMABLE_HTTP', url: proxyUrl, callTimeoutMs: 30_000 },
    ]) {
      const created = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, upstream);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${created.body.id}/sync`);
      await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    }
    await p.admin('POST', `/v1/orgs/${orgId}/prices`, { toolPattern: TOOL, perCallMicros: 100 });
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled(agents.map((a) => a.close()));
    await db?.$disconnect();
    await p?.close();
    everythingHttp?.kill();
    proxy?.closeAllConnections();
    proxy?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('should stop the call of a stdio upstream: it hears the cancellation and never answers', async () => {
    const { agent, keyId } = await agentFor('stdio');
    const { error, progressAfterCancel } = await cancelAfterFirstProgress(agent, `local__${TOOL}`);
    expect(String(error)).toContain('the user stopped it');

    const sent = () => linesOf(path.join(dir, 'stdio.in'));
    const upstreamCall = sent().find((m) => m.method === 'tools/call' && m.params?.name === TOOL);
    expect(upstreamCall).toBeDefined();
    await expect
      .poll(
        () =>
          sent()
            .filter((m) => m.method === 'notifications/cancelled')
            .map((m) => m.params?.requestId),
        { timeout: 30_000 },
      )
      .toContain(upstreamCall!.id);
    // The operation's last progress comes when it would have answered: it did not answer.
    const answered = () => linesOf(path.join(dir, 'stdio.out'));
    await expect
      .poll(() => answered().some((m) => m.method === 'notifications/progress' && m.params?.progress === 6), {
        timeout: 30_000,
      })
      .toBe(true);
    // (The log also holds the sync's own processes, whose ids start over: a tool result is what counts.)
    expect(
      answered().filter(
        (m) => m.id === upstreamCall!.id && typeof m.result === 'object' && m.result !== null && 'content' in m.result,
      ),
    ).toEqual([]);
    expect(progressAfterCancel).toEqual([]);

    await expect
      .poll(() => db.usageEvent.findMany({ where: { keyId } }), { timeout: 30_000 })
      .toMatchObject([{ toolName: TOOL, outcome: 'UPSTREAM_ERROR', costMicros: 0n }]);
  }, 90_000);

  it('should stop the call of a Streamable HTTP upstream: it hears the cancellation, and the agent no more progress', async () => {
    const { agent, keyId } = await agentFor('http');
    const { error, progressAfterCancel } = await cancelAfterFirstProgress(agent, `web__${TOOL}`);
    expect(String(error)).toContain('the user stopped it');

    const upstreamCall = httpSent.find((m) => m.method === 'tools/call' && m.params?.name === TOOL);
    expect(upstreamCall).toBeDefined();
    await expect
      .poll(() => httpSent.filter((m) => m.method === 'notifications/cancelled').map((m) => m.params?.requestId), {
        timeout: 10_000,
      })
      .toContain(upstreamCall!.id);
    expect(
      httpAnswered.some(
        (chunk) => chunk.includes(`"id":${JSON.stringify(upstreamCall!.id)}`) && chunk.includes('"result"'),
      ),
    ).toBe(false);
    expect(progressAfterCancel).toEqual([]);

    await expect
      .poll(() => db.usageEvent.findMany({ where: { keyId } }), { timeout: 30_000 })
      .toMatchObject([{ toolName: TOOL, outcome: 'UPSTREAM_ERROR', costMicros: 0n }]);
  }, 30_000);
});

async function freePort(): Promise<number> {
  const probe = net.createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise((r) => probe.close(r));
  return port;
}

/** Forwards to the upstream on `port`, recording each JSON-RPC message sent and each answer chunk. */
function recordingProxy(port: number, sent: Message[], answered: string[]): http.Server {
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (body.length > 0) {
        const parsed = JSON.parse(body.toString('utf8')) as Message | Message[];
        sent.push(...(Array.isArray(parsed) ? parsed : [parsed]));
      }
      const upstream = http.request(
        {
          host: '127.0.0.1',
          port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: `127.0.0.1:${port}` },
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.on('data', (c: Buffer) => answered.push(c.toString('utf8')));
          up.pipe(res);
        },
      );
      // The edge hanging up (its cancellation) ends the forwarded request too.
      res.on('close', () => upstream.destroy());
      upstream.on('error', () => res.destroy());
      upstream.end(body);
    });
  });
}
