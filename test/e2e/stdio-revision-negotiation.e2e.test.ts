import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResult,
  ElicitRequestSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { PrismaClient } from '@prisma/client';
import { PrismaPg } from '@prisma/adapter-pg';
import { QueueName } from '@tollgate/queue';
import {
  REPO_ROOT,
  SERVER_EVERYTHING,
  callMeta,
  connectAgent,
  textOf,
  waitForJobs,
  waitForUsageEvents,
} from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunningPlatform, startPlatform } from '../support/platform';

const PER_CALL = 25;

/** The lines a stdio tap saw the edge send, parsed. */
function tapped(log: string): { method?: string; params?: Record<string, unknown> }[] {
  if (!existsSync(`${log}.in`)) return [];
  return readFileSync(`${log}.in`, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** Per spawned process, how many `server/discover` and `initialize` requests the edge sent (on average). */
function probesPerSpawn(log: string): { discover: number; initialize: number } {
  const spawns = lines(`${log}.spawns`).length;
  const count = (method: string) => tapped(log).filter((m) => m.method === method).length / spawns;
  return { discover: count('server/discover'), initialize: count('initialize') };
}

function running(pid: string): boolean {
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch {
    return false;
  }
}

function lines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

/**
 * stdio upstreams in the newest revision they speak, each on one spawned process: asked
 * `server/discover` first; a server that lists 2026-07-28 (the fixture, which refuses initialize)
 * is spoken to statelessly, and a 2025-11-25 server (server-everything, which answers -32601)
 * is initialized on the same process.
 */
describe('stdio upstreams of either revision behind the edge', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let orgId: string;
  let key: string;
  let modernId: string;
  let everythingId: string;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tg-stdio-rev-'));
  const modernTap = path.join(dir, 'modern');
  const everythingTap = path.join(dir, 'everything');
  const agents: Client[] = [];

  async function syncNow(upstreamId: string) {
    const res = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
    expect(res.status).toBe(202);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [res.body.jobId]);
  }

  async function ledgerRow(result: CallToolResult) {
    const callId = callMeta(result)!.callId;
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [callId]);
    return db.usageEvent.findFirstOrThrow({ where: { id: callId } });
  }

  beforeAll(async () => {
    p = await startPlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Stdio rev', slug: 'stdio-rev' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'r@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, {
      allow: ['modern:*', 'everything:*'],
      deny: [],
      resourceAllow: ['modern:*'],
      promptAllow: ['modern:*'],
    });
    modernId = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'modern',
        transport: 'STDIO',
        command: process.execPath,
        args: [
          path.join(REPO_ROOT, 'test/fixtures/stdio-tap.mjs'),
          modernTap,
          process.execPath,
          path.join(REPO_ROOT, 'test/fixtures/modern-stdio-server.mjs'),
        ],
        callTimeoutMs: 20_000,
      })
    ).body.id;
    everythingId = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'everything',
        transport: 'STDIO',
        command: process.execPath,
        args: [
          path.join(REPO_ROOT, 'test/fixtures/stdio-tap.mjs'),
          everythingTap,
          ...[SERVER_EVERYTHING.command, ...SERVER_EVERYTHING.args],
        ],
      })
    ).body.id;
    await syncNow(modernId);
    await syncNow(everythingId);
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
          upstreamId: modernId,
          toolPattern: '*',
          perCallMicros: PER_CALL,
        })
      ).status,
    ).toBe(201);
    key = (
      await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'stdio-rev', disclosureMode: 'FULL' })
    ).body.secret;
  }, 90_000);

  afterAll(async () => {
    await Promise.allSettled(agents.map((a) => a.close()));
    await p?.close();
    await db?.$disconnect();
  });

  it('should record that the 2026-07-28-only stdio upstream speaks 2026-07-28, and catalog its tools and prompt', async () => {
    const row = await db.upstreamServer.findFirstOrThrow({ where: { id: modernId } });
    expect(row.protocolRevision).toBe('2026-07-28');
    // Each process spawned for it (one per connection) was asked server/discover, and nothing else opened it.
    await expect.poll(() => probesPerSpawn(modernTap)).toEqual({ discover: 1, initialize: 0 });
    // The syncs' processes were ended when they were done (no edge has connected yet).
    await expect.poll(() => lines(`${modernTap}.spawns`).filter(running)).toEqual([]);
    const agent = await connectAgent(p.edgeUrl, key);
    agents.push(agent);
    expect((await agent.listTools()).tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['modern__echo', 'modern__greet', 'modern__touch']),
    );
    expect((await agent.listPrompts()).prompts.map((t) => t.name)).toContain('modern__welcome');
  });

  it('should call its tool governed and metered, read its resource and get its prompt', async () => {
    const agent = await connectAgent(p.edgeUrl, key);
    agents.push(agent);
    const echo = (await agent.callTool({ name: 'modern__echo', arguments: { text: 'hi' } })) as CallToolResult;
    expect(echo.isError).toBeFalsy();
    expect(textOf(echo)).toBe('echo: hi');
    const row = await ledgerRow(echo);
    expect([row.toolName, Number(row.costMicros), row.outcome]).toEqual(['echo', PER_CALL, 'OK']);

    const read = await agent.readResource({ uri: 'memo://watched' });
    expect(read.contents[0]).toMatchObject({ uri: 'memo://watched', text: 'watched contents' });
    const prompt = await agent.getPrompt({ name: 'modern__welcome' });
    expect(JSON.stringify(prompt.messages)).toContain('Welcome aboard.');
  });

  it("should answer the upstream's input_required round through a 2025-11-25 agent's client", async () => {
    const agent = new Client(
      { name: 'eliciting-agent', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } } },
    );
    agent.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Ada' } }));
    await agent.connect(
      new StreamableHTTPClientTransport(new URL(`${p.edgeUrl}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      }),
    );
    agents.push(agent);
    const greeted = (await agent.callTool({ name: 'modern__greet', arguments: {} })) as CallToolResult;
    expect(textOf(greeted)).toBe('Hello, Ada!');
    const row = await ledgerRow(greeted);
    expect([row.toolName, Number(row.costMicros), row.outcome]).toEqual(['greet', PER_CALL, 'OK']);
  });

  it("should relay the upstream's resource update, heard on its stdio listen stream, to a subscribed session", async () => {
    const agent = await connectAgent(p.edgeUrl, key);
    agents.push(agent);
    const updated = new Promise<string>((resolve) =>
      agent.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => resolve(n.params.uri)),
    );
    await agent.subscribeResource({ uri: 'memo://watched' });
    const touched = (await agent.callTool({ name: 'modern__touch', arguments: {} })) as CallToolResult;
    expect(textOf(touched)).toBe('Resource update announced');
    expect(await updated).toBe('memo://watched');
    await agent.unsubscribeResource({ uri: 'memo://watched' });
    // The edge's pooled connection too: one process, asked server/discover.
    await expect.poll(() => probesPerSpawn(modernTap)).toEqual({ discover: 1, initialize: 0 });
  });

  it('should initialize server-everything over stdio as 2025-11-25 on the process that was asked server/discover', async () => {
    const row = await db.upstreamServer.findFirstOrThrow({ where: { id: everythingId } });
    expect(row.protocolRevision).toBe('2025-11-25');
    // The syncs: each spawned one process, asked it server/discover (answered -32601), then
    // initialized that same process (a second spawn would be a process without an initialize).
    await expect.poll(() => probesPerSpawn(everythingTap)).toEqual({ discover: 1, initialize: 1 });
    const answers = readFileSync(`${everythingTap}.out`, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(answers.filter((a) => a.error?.code === -32601)).toHaveLength(lines(`${everythingTap}.spawns`).length);

    const agent = await connectAgent(p.edgeUrl, key);
    agents.push(agent);
    const echo = (await agent.callTool({ name: 'everything__echo', arguments: { message: 'old' } })) as CallToolResult;
    expect(textOf(echo)).toContain('old');
    // The edge's own connection is a 2025-11-25 session too: one more process, initialized once
    // (the sync found the revision, so the edge does not ask server/discover again).
    const initialize = (log: string) => tapped(log).filter((m) => m.method === 'initialize').length;
    await expect.poll(() => lines(`${everythingTap}.spawns`).length === initialize(everythingTap)).toBe(true);
    expect(tapped(everythingTap).filter((m) => m.method === 'tools/call')).toHaveLength(1);
  });
});
