import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { QueueName } from '@tollgate/queue';
import {
  REPO_ROOT,
  SERVER_EVERYTHING,
  connectAgent,
  waitForJobs,
  waitForUsageEvents,
  watchRefusedCalls,
} from '@tollgate/testing';
import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunningPlatform, startPlatform } from '../support/platform';

const ARCHITECTURE = 'demo://resource/static/document/architecture.md';
const DENIED = 'demo://resource/static/document/extension.md';
const PER_READ = 1_000;
const PER_PROMPT = 500;

interface CallMetaShape {
  callId: string;
  costMicros: number;
  outputTokens: number;
}

function metaOf(result: { _meta?: Record<string, unknown> }): {
  call: CallMetaShape;
  budget: { remainingMicros: number | null };
} {
  return {
    call: result._meta?.['tollgate/call'] as CallMetaShape,
    budget: result._meta?.['tollgate/budget'] as { remainingMicros: number | null },
  };
}

async function refusalOf(p: Promise<unknown>): Promise<McpError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(McpError);
  return err as McpError;
}

describe('resources, prompts and completions through the governed edge (server-everything over stdio)', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let orgId: string;
  let teamId: string;
  let userId: string;
  let everythingId: string;
  let agent: Client;
  let pagedAgent: Client;

  async function syncNow(upstreamId: string) {
    const res = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
    expect(res.status).toBe(202);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [res.body.jobId]);
  }

  async function newKey(name: string): Promise<{ id: string; secret: string }> {
    const key = await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name });
    expect(key.status).toBe(201);
    return { id: key.body.key.id, secret: key.body.secret };
  }

  beforeAll(async () => {
    p = await startPlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Docs', slug: 'docs' })).body.id;
    teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 'writers' })).body.id;
    userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'rita@docs.test' })).body.id;
    expect((await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId })).status).toBe(201);
    const key = await newKey('agent');

    everythingId = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'everything',
        transport: 'STDIO',
        ...SERVER_EVERYTHING,
      })
    ).body.id;
    await syncNow(everythingId);
    const policy = await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, {
      allow: ['everything:*'],
      deny: [],
      resourceAllow: ['everything:*'],
      resourceDeny: [`everything:${DENIED}`],
      promptAllow: ['everything:*'],
    });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
          upstreamId: everythingId,
          toolPattern: 'resource:*',
          perCallMicros: PER_READ,
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
          upstreamId: everythingId,
          toolPattern: 'prompt:*',
          perCallMicros: PER_PROMPT,
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
          scope: 'KEY',
          scopeId: key.id,
          period: 'MONTH',
          limitMicros: 1_000_000,
        })
      ).status,
    ).toBe(200);
    agent = await connectAgent(p.edgeUrl, key.secret);

    // A second key whose output cap is small: a large read is paged.
    const paged = await newKey('paged');
    expect(
      (await p.admin('PUT', `/v1/orgs/${orgId}/policies/KEY/${paged.id}`, { allow: [], deny: [], outputTokenCap: 200 }))
        .status,
    ).toBe(200);
    pagedAgent = await connectAgent(p.edgeUrl, paged.secret);
  }, 120_000);

  afterAll(async () => {
    await agent?.close();
    await pagedAgent?.close();
    await db?.$disconnect();
    await p?.close();
  });

  it('should catalog the upstream’s resources, templates and prompts, pinned', async () => {
    const entries = await db.catalogEntry.findMany({ where: { orgId, upstreamId: everythingId } });
    const kinds = (k: string) => entries.filter((e) => e.kind === k && e.pinnedHash !== null).map((e) => e.key);
    expect(kinds('RESOURCE')).toContain(ARCHITECTURE);
    expect(kinds('RESOURCE_TEMPLATE')).toContain('demo://resource/dynamic/text/{resourceId}');
    expect(kinds('PROMPT')).toEqual(
      expect.arrayContaining(['simple-prompt', 'args-prompt', 'completable-prompt', 'resource-prompt']),
    );
  });

  it('should list what the policy allows, prompts namespaced and URIs intact', async () => {
    const resources = (await agent.listResources()).resources.map((r) => r.uri);
    expect(resources).toContain(ARCHITECTURE);
    expect(resources).not.toContain(DENIED);
    expect((await agent.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toContain(
      'demo://resource/dynamic/text/{resourceId}',
    );
    expect((await agent.listPrompts()).prompts.map((x) => x.name)).toEqual(
      expect.arrayContaining(['everything__simple-prompt', 'everything__args-prompt']),
    );
  });

  it('should read a resource and a templated resource, priced, with the remaining budget, and put both in the ledger', async () => {
    const read = await agent.readResource({ uri: ARCHITECTURE });
    expect(read.contents[0]).toMatchObject({ uri: ARCHITECTURE, mimeType: 'text/markdown' });
    expect((read.contents[0] as { text: string }).text).toContain('Architecture');
    const meta = metaOf(read);
    expect(meta.call.costMicros).toBe(PER_READ);
    expect(meta.budget.remainingMicros).toBe(1_000_000 - PER_READ);

    const dynamic = await agent.readResource({ uri: 'demo://resource/dynamic/text/7' });
    expect(dynamic.contents[0].uri).toBe('demo://resource/dynamic/text/7');
    const dynamicMeta = metaOf(dynamic);

    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [meta.call.callId, dynamicMeta.call.callId]);
    const rows = await db.usageEvent.findMany({ where: { id: { in: [meta.call.callId, dynamicMeta.call.callId] } } });
    expect(rows.map((r) => [r.toolName, Number(r.costMicros), r.outcome]).sort()).toEqual([
      ['resource:demo://resource/dynamic/text/7', PER_READ, 'OK'],
      [`resource:${ARCHITECTURE}`, PER_READ, 'OK'],
    ]);
  });

  it('should refuse a denied resource with the rule that denied it, uncharged, and record the refusal', async () => {
    const watch = await watchRefusedCalls(p.env.redisUrl, p.env.redisPrefix);
    const err = await refusalOf(agent.readResource({ uri: DENIED }));
    expect(err.code).toBe(-32003);
    expect(err.data).toMatchObject({
      code: 'RESOURCE_NOT_ALLOWED',
      reason: 'DENIED_BY_RULE',
      scope: 'ORG',
      rule: `everything:${DENIED}`,
      uri: DENIED,
    });
    const unknown = await refusalOf(agent.readResource({ uri: 'nothing://here' }));
    expect(unknown.code).toBe(-32002);
    // Recorded like a refused tool call (refusal reports, per-call log), under the read's metered name;
    // an unknown URI names no upstream resource and is not a refusal of one.
    const ids = await watch.written(1).finally(() => watch.close());
    const rows = await db.refusedCall.findMany({ where: { orgId } });
    expect(rows.map((r) => r.id)).toEqual(ids);
    expect(rows[0]).toMatchObject({
      code: 'RESOURCE_NOT_ALLOWED',
      toolName: `resource:${DENIED}`,
      upstreamId: everythingId,
      calls: 1,
      budgetId: null,
    });
  });

  it('should get prompts with arguments and embedded resources, priced and in the ledger', async () => {
    const got = await agent.getPrompt({
      name: 'everything__args-prompt',
      arguments: { city: 'Paris', state: 'Texas' },
    });
    expect(JSON.stringify(got.messages)).toContain('Paris');
    const meta = metaOf(got);
    expect(meta.call.costMicros).toBe(PER_PROMPT);

    const embedded = await agent.getPrompt({
      name: 'everything__resource-prompt',
      arguments: { resourceType: 'Text', resourceId: '2' },
    });
    expect(embedded.messages.some((m) => m.content.type === 'resource')).toBe(true);

    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [meta.call.callId]);
    const row = await db.usageEvent.findFirstOrThrow({ where: { id: meta.call.callId } });
    expect([row.toolName, Number(row.costMicros), row.upstreamId]).toEqual([
      'prompt:args-prompt',
      PER_PROMPT,
      everythingId,
    ]);
  });

  it('should complete a prompt argument and a resource template variable through the edge', async () => {
    const prompt = await agent.complete({
      ref: { type: 'ref/prompt', name: 'everything__completable-prompt' },
      argument: { name: 'department', value: 'E' },
    });
    expect(prompt.completion.values.length).toBeGreaterThan(0);
    expect(prompt.completion.values.every((v) => v.startsWith('E'))).toBe(true);
    const template = await agent.complete({
      ref: { type: 'ref/resource', uri: 'demo://resource/dynamic/text/{resourceId}' },
      argument: { name: 'resourceId', value: '1' },
    });
    expect(Array.isArray(template.completion.values)).toBe(true);
  });

  it('should page a resource read over the output cap instead of cutting it', async () => {
    // This key has no resource policy of its own: the org's lists apply, its cap narrows the output.
    const read = await pagedAgent.readResource({ uri: ARCHITECTURE });
    const text = (read.contents[0] as { text: string }).text;
    expect(text).toMatch(/\[Page 1 of \d+\. The result continues: call tollgate__read_result_page/);
    expect(read._meta?.['tollgate/page']).toMatchObject({ page: 1, nextCursor: '2' });
    expect(metaOf(read).call.outputTokens).toBeLessThanOrEqual(200);
  });

  it('should relay notifications/resources/updated to the session that subscribed, under its URI', async () => {
    const updated = new Promise<string>((resolve) =>
      agent.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri)),
    );
    await agent.subscribeResource({ uri: ARCHITECTURE });
    // server-everything sends an update to its subscribers every 5 s once this tool turns them on.
    await agent.callTool({ name: 'everything__toggle-subscriber-updates', arguments: {} });
    expect(await updated).toBe(ARCHITECTURE);
    await agent.unsubscribeResource({ uri: ARCHITECTURE });
  }, 30_000);

  it('should hold new resources and prompts for review where the org asks for it, and serve them once approved', async () => {
    const reviewOrg = (await p.admin('POST', '/v1/orgs', { name: 'Careful', slug: 'careful', autoApproveTools: false }))
      .body.id;
    const team = (await p.admin('POST', `/v1/orgs/${reviewOrg}/teams`, { name: 't' })).body.id;
    const user = (await p.admin('POST', `/v1/orgs/${reviewOrg}/users`, { email: 'c@careful.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${reviewOrg}/teams/${team}/members`, { userId: user });
    const secret = (await p.admin('POST', `/v1/orgs/${reviewOrg}/keys`, { teamId: team, userId: user, name: 'k' })).body
      .secret;
    const up = (
      await p.admin('POST', `/v1/orgs/${reviewOrg}/upstreams`, {
        namespace: 'everything',
        transport: 'STDIO',
        ...SERVER_EVERYTHING,
      })
    ).body.id;
    const sync = await p.admin('POST', `/v1/orgs/${reviewOrg}/upstreams/${up}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    await p.admin('PUT', `/v1/orgs/${reviewOrg}/policies/ORG/${reviewOrg}`, {
      allow: [],
      deny: [],
      resourceAllow: ['everything:*'],
      promptAllow: ['everything:*'],
    });

    const held = await p.admin('GET', `/v1/orgs/${reviewOrg}/catalog-entries?reviewStatus=PENDING&kind=PROMPT`);
    expect(held.status).toBe(200);
    const simple = held.body.find((e: { key: string }) => e.key === 'simple-prompt');
    expect(simple).toMatchObject({ kind: 'PROMPT', pinnedHash: null });
    const careful = await connectAgent(p.edgeUrl, secret);
    try {
      expect((await careful.listPrompts()).prompts).toEqual([]);
      expect((await careful.listResources()).resources).toEqual([]);
      const approved = await p.admin('POST', `/v1/orgs/${reviewOrg}/catalog-entries/${simple.id}/approve`, {
        definitionHash: simple.definitionHash,
      });
      expect(approved.status).toBe(200);
      expect((await careful.listPrompts()).prompts.map((x) => x.name)).toEqual(['everything__simple-prompt']);
    } finally {
      await careful.close();
    }
  });

  it('should expose an upstream unprefixed, and refuse a second one whose names collide', async () => {
    const res = await p.admin('PUT', `/v1/orgs/${orgId}/upstreams/${everythingId}/exposure`, {
      exposeUnprefixed: true,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.exposeUnprefixed).toBe(true);
    const fresh = await connectAgent(p.edgeUrl, (await newKey('fresh')).secret);
    try {
      expect((await fresh.listPrompts()).prompts.map((x) => x.name)).toContain('simple-prompt');
      expect((await fresh.listTools()).tools.map((t) => t.name)).toContain('echo');
    } finally {
      await fresh.close();
    }

    const twinId = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'twin',
        transport: 'STDIO',
        ...SERVER_EVERYTHING,
      })
    ).body.id;
    await syncNow(twinId);
    const refused = await p.admin('PUT', `/v1/orgs/${orgId}/upstreams/${twinId}/exposure`, { exposeUnprefixed: true });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('NAME_COLLISION');
    expect(refused.body.message).toContain('tool echo');
    expect(
      (await p.admin('PUT', `/v1/orgs/${orgId}/upstreams/${twinId}/exposure`, { exposeUnprefixed: 'yes' })).status,
    ).toBe(400);
  });
});

/** server-everything over Streamable HTTP on a free loopback port (test env allows loopback upstreams). */
async function startEverythingHttp(): Promise<{ url: string; child: ChildProcess }> {
  const probe = net.createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise((r) => probe.close(r));
  const child = spawn(
    process.execPath,
    [`${REPO_ROOT}/node_modules/@modelcontextprotocol/server-everything/dist/index.js`, 'streamableHttp'],
    {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => (d.toString().includes('listening on port') ? resolve() : undefined));
    child.once('exit', (code) => reject(new Error(`server-everything exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

describe('resources, prompts and completions through the governed edge (server-everything over Streamable HTTP)', () => {
  let p: RunningPlatform;
  let everything: { url: string; child: ChildProcess };
  let agent: Client;
  let db: PrismaClient;

  beforeAll(async () => {
    everything = await startEverythingHttp();
    p = await startPlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    const orgId = (await p.admin('POST', '/v1/orgs', { name: 'Web', slug: 'web' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'w@web.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const secret = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'k' })).body.secret;
    const up = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'web',
      transport: 'STREAMABLE_HTTP',
      url: everything.url,
      outputTokenCap: 300,
    });
    expect(up.status, JSON.stringify(up.body)).toBe(201);
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${up.body.id}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, {
      allow: [],
      deny: [],
      resourceAllow: ['web:*'],
      promptAllow: ['web:*'],
    });
    await p.admin('POST', `/v1/orgs/${orgId}/prices`, { toolPattern: 'resource:*', perCallMicros: PER_READ });
    agent = await connectAgent(p.edgeUrl, secret);
  }, 120_000);

  afterAll(async () => {
    await agent?.close();
    await db?.$disconnect();
    await p?.close();
    everything?.child.kill();
  });

  it('should read a resource (paged at the upstream’s output cap), get a prompt and complete an argument, with the read and the get in the ledger', async () => {
    const read = await agent.readResource({ uri: ARCHITECTURE });
    expect((read.contents[0] as { text: string }).text).toContain('Architecture');
    // The upstream's own output cap applies to reads as to tool results: this one is paged.
    expect(read._meta?.['tollgate/page']).toMatchObject({ page: 1, nextCursor: '2' });
    expect(metaOf(read).call.outputTokens).toBeLessThanOrEqual(300);
    const got = await agent.getPrompt({ name: 'web__args-prompt', arguments: { city: 'Lyon' } });
    expect(JSON.stringify(got.messages)).toContain('Lyon');
    const completed = await agent.complete({
      ref: { type: 'ref/prompt', name: 'web__completable-prompt' },
      argument: { name: 'department', value: 'E' },
    });
    expect(completed.completion.values.length).toBeGreaterThan(0);

    const ids = [metaOf(read).call.callId, metaOf(got).call.callId];
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, ids);
    const rows = await db.usageEvent.findMany({ where: { id: { in: ids } }, orderBy: { toolName: 'asc' } });
    expect(rows.map((r) => [r.toolName, Number(r.costMicros)])).toEqual([
      ['prompt:args-prompt', 0],
      [`resource:${ARCHITECTURE}`, PER_READ],
    ]);
  });
});
