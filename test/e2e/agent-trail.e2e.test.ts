import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { INestApplication } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { loadEdgeConfig } from '@tollgate/config';
import { TrailEvent, trailEntryFields, usageOutboxKeys } from '@tollgate/usage';
import { JobName, QueueName } from '@tollgate/queue';
import { Queue } from 'bullmq';
import { shardOf } from '@tollgate/redis';
import {
  SERVER_EVERYTHING,
  connectAgent,
  testBullOptions,
  testRedisClient,
  textOf,
  waitForJobs,
  waitForTrailSteps,
  waitForUsageEvents,
} from '@tollgate/testing';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEdgeApp } from '../../apps/mcp-edge/src/edge-app';
import { RunningPlatform, startPlatform } from '../support/platform';
import { SCRIPT_TIME_MS } from '../support/code-mode';

const ECHO_PRICE = 100_000;
const ARCHITECTURE = 'demo://resource/static/document/architecture.md';
const SUM_PRICE = 50_000;

type CallResult = Awaited<ReturnType<Client['callTool']>>;
const answerOf = (res: CallResult): any => JSON.parse(textOf(res as never));
const asText = (rows: unknown): string => JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
const versionOf = (res: { _meta?: Record<string, unknown> }): string =>
  (res._meta?.['tollgate/catalog'] as { version: string }).version;

interface OrgFixture {
  orgId: string;
  teamId: string;
  userId: string;
  progressiveKey: { id: string; secret: string };
  codeKey: { id: string; secret: string };
}

/**
 * An operator reconstructing what an agent saw: a real MCP SDK client works through progressive
 * and code mode on two edges; the trail read back from the admin API lists each search, schema and
 * stub read, call and script in order, with tokens, cost and the catalog version, and agrees with the
 * ledger on every call.
 */
describe('agent trail through two edges', () => {
  let p: RunningPlatform;
  let edge2: INestApplication;
  let edge2Url: string;
  let db: PrismaClient;
  let meta: OrgFixture;
  let full: OrgFixture;
  const agents: Client[] = [];

  async function makeOrg(slug: string, trailMode?: 'FULL'): Promise<OrgFixture> {
    const orgId = (await p.admin('POST', '/v1/orgs', { name: slug, slug })).body.id;
    if (trailMode) expect((await p.admin('PATCH', `/v1/orgs/${orgId}`, { trailMode })).status).toBe(200);
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: `${slug}@example.test` })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const upstream = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'everything',
      transport: 'STDIO',
      ...SERVER_EVERYTHING,
    });
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstream.body.id}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, {
      allow: ['everything:*'],
      deny: ['everything:get-env'],
      resourceAllow: ['everything:*'],
      promptAllow: ['everything:*'],
    });
    for (const [toolPattern, perCallMicros] of [
      ['echo', ECHO_PRICE],
      ['get-sum', SUM_PRICE],
    ] as const)
      await p.admin('POST', `/v1/orgs/${orgId}/prices`, { upstreamId: upstream.body.id, toolPattern, perCallMicros });
    const key = async (name: string, disclosureMode: string) => {
      const body = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name, disclosureMode })).body;
      return { id: body.key.id as string, secret: body.secret as string };
    };
    return {
      orgId,
      teamId,
      userId,
      progressiveKey: await key('progressive', 'PROGRESSIVE'),
      codeKey: await key('coder', 'CODE'),
    };
  }

  async function agent(url: string, secret: string): Promise<Client> {
    const a = await connectAgent(url, secret);
    agents.push(a);
    return a;
  }

  const trailOf = async (orgId: string, query: string, token?: string) =>
    p.admin('GET', `/v1/orgs/${orgId}/trail?${query}`, undefined, token);

  const stepCount = (orgId: string) => () => db.trailEvent.count({ where: { orgId } });

  beforeAll(async () => {
    p = await startPlatform();
    edge2 = await createEdgeApp(loadEdgeConfig(p.env.vars));
    await edge2.listen(0, '127.0.0.1');
    edge2Url = (await edge2.getUrl()).replace('[::1]', '127.0.0.1');
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    meta = await makeOrg('trail-meta');
    full = await makeOrg('trail-full', 'FULL');
  });

  afterAll(async () => {
    await Promise.allSettled(agents.map((a) => a.close()));
    await db?.$disconnect();
    await edge2?.close();
    await p?.close();
  });

  it('should render byte-identical lists, searches, schemas and stubs on two edges and name the same catalog version', async () => {
    const [one, two] = [
      await agent(p.edgeUrl, meta.progressiveKey.secret),
      await agent(edge2Url, meta.progressiveKey.secret),
    ];
    const lists = [await one.listTools(), await two.listTools()];
    expect(JSON.stringify(lists[1].tools)).toBe(JSON.stringify(lists[0].tools));
    expect(versionOf(lists[1])).toBe(versionOf(lists[0]));
    for (const call of [
      { name: 'tollgate__search_tools', arguments: { query: 'add two numbers' } },
      { name: 'tollgate__get_tool_schemas', arguments: { names: ['everything__get-sum', 'everything__echo'] } },
      { name: 'tollgate__list_categories', arguments: {} },
    ]) {
      const [a, b] = [await one.callTool(call), await two.callTool(call)];
      expect(textOf(b as never)).toBe(textOf(a as never));
      expect(versionOf(b)).toBe(versionOf(a));
      expect(versionOf(a)).toBe(versionOf(lists[0]));
    }
    const [c1, c2] = [await agent(p.edgeUrl, meta.codeKey.secret), await agent(edge2Url, meta.codeKey.secret)];
    for (const call of [
      { name: 'tollgate__list_files', arguments: { path: 'servers/everything/' } },
      { name: 'tollgate__read_files', arguments: { paths: ['servers/everything/get-sum.d.ts', 'everything__echo'] } },
      { name: 'tollgate__get_tool_docs', arguments: { paths: ['everything__get-sum'] } },
    ]) {
      const [a, b] = [await c1.callTool(call), await c2.callTool(call)];
      expect(textOf(b as never)).toBe(textOf(a as never));
      expect(versionOf(b)).toBe(versionOf(a));
    }
  });

  it('should list a progressive session’s list, search, schema read and calls in order with tokens, cost and version', async () => {
    const a = await agent(edge2Url, meta.progressiveKey.secret);
    const list = await a.listTools();
    const search = await a.callTool({ name: 'tollgate__search_tools', arguments: { query: 'add two numbers' } });
    const schemas = await a.callTool({
      name: 'tollgate__get_tool_schemas',
      arguments: { names: ['everything__get-sum'] },
    });
    const sum = await a.callTool({ name: 'everything__get-sum', arguments: { a: 2, b: 3 } });
    const echo = await a.callTool({
      name: 'tollgate__call_tool',
      arguments: { name: 'everything__echo', arguments: { message: 'meta-only private words' } },
    });
    const callIds = [sum, echo].map((r) => (r._meta as any)['tollgate/call'].callId as string);
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, callIds);
    const sessionId = (a.transport as { sessionId?: string }).sessionId!;
    expect(sessionId).toBeTruthy();
    await waitForTrailSteps(
      p.env.redisUrl,
      p.env.redisPrefix,
      () => db.trailEvent.count({ where: { orgId: meta.orgId, sessionId } }),
      5,
    );

    const res = await trailOf(meta.orgId, `sessionId=${encodeURIComponent(sessionId)}`);
    expect(res.status).toBe(200);
    const steps = res.body.steps as any[];
    expect(steps.map((s) => [s.kind, s.name])).toEqual([
      ['TOOLS_LIST', 'tools/list'],
      ['SEARCH', 'tollgate__search_tools'],
      ['SCHEMAS', 'tollgate__get_tool_schemas'],
      ['CALL', 'everything__get-sum'],
      ['CALL', 'everything__echo'],
    ]);
    const [listStep, searchStep, schemaStep, sumStep, echoStep] = steps;
    const version = versionOf(list);
    expect(listStep).toMatchObject({
      tokens: (list._meta as any)['tollgate/disclosure'].tokens,
      catalogVersion: version,
    });
    expect(searchStep).toMatchObject({
      tokens: answerOf(search).tokens,
      catalogVersion: version,
      detail: { query: 'add two numbers', names: answerOf(search).tools.map((t: { name: string }) => t.name) },
    });
    expect(searchStep.detail.names).toContain('everything__get-sum');
    expect(schemaStep).toMatchObject({ tokens: answerOf(schemas).tokens, detail: { names: ['everything__get-sum'] } });
    // The call names the last step that showed its tool: the schema read, after the search.
    expect(sumStep).toMatchObject({ callId: callIds[0], costMicros: SUM_PRICE, ledBy: schemaStep.id, ok: true });
    expect(echoStep).toMatchObject({ callId: callIds[1], costMicros: ECHO_PRICE });
    expect(sumStep.tokens).toBe((sum._meta as any)['tollgate/call'].outputTokens);
    expect(res.body.summary).toEqual({
      steps: 5,
      discoveryTokens: listStep.tokens + searchStep.tokens + schemaStep.tokens,
      callTokens: sumStep.tokens + echoStep.tokens,
      costMicros: SUM_PRICE + ECHO_PRICE,
    });
    // Metadata only: no content, and the arguments' words are nowhere in the trail.
    const rows = await db.trailEvent.findMany({ where: { orgId: meta.orgId } });
    expect(rows.every((r) => r.content === null)).toBe(true);
    expect(asText(rows)).not.toContain('meta-only private words');
  });

  it('should keep a code-mode script with the stubs it was written against, each inner call with its line, and the failing line', async () => {
    const a = await agent(p.edgeUrl, meta.codeKey.secret);
    await a.callTool({ name: 'tollgate__list_files', arguments: { path: 'servers/everything/' } });
    await a.callTool({ name: 'tollgate__read_files', arguments: { paths: ['servers/everything/get-sum.d.ts'] } });
    const ok = answerOf(
      await a.callTool({
        name: 'tollgate__run_script',
        arguments: {
          code: `const s = await everything.get_sum({ a: 1, b: 2 });\nreturn s;`,
          timeoutMs: SCRIPT_TIME_MS,
        },
      }),
    );
    const failed = await a.callTool({
      name: 'tollgate__run_script',
      arguments: {
        code: `await everything.echo({ message: 'x' });\nawait callTool('everything__get-env', {});`,
        timeoutMs: SCRIPT_TIME_MS,
      },
    });
    expect(failed.isError).toBe(true);
    const failedAnswer = answerOf(failed);
    const callIds = [...ok.calls, ...failedAnswer.calls].map((c: { callId?: string }) => c.callId).filter(Boolean);
    expect(callIds).toHaveLength(2);
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, callIds as string[]);
    const sessionId = (a.transport as { sessionId?: string }).sessionId!;
    await waitForTrailSteps(
      p.env.redisUrl,
      p.env.redisPrefix,
      () => db.trailEvent.count({ where: { orgId: meta.orgId, sessionId } }),
      4,
    );
    const steps = (await trailOf(meta.orgId, `sessionId=${encodeURIComponent(sessionId)}&kind=FILES_READ,SCRIPT`)).body
      .steps as any[];
    expect(steps.map((s) => s.kind)).toEqual(['FILES_READ', 'SCRIPT', 'SCRIPT']);
    expect(steps[0]).toMatchObject({
      detail: { paths: ['servers/everything/get-sum.d.ts'] },
      catalogVersion: expect.any(String),
    });
    expect(steps[1]).toMatchObject({
      ok: true,
      costMicros: SUM_PRICE,
      readBefore: ['servers/everything/get-sum.d.ts'],
      detail: {
        calls: [{ tool: 'everything__get-sum', line: 1, ok: true, callId: ok.calls[0].callId, costMicros: SUM_PRICE }],
      },
      content: null,
    });
    expect(steps[2]).toMatchObject({
      ok: false,
      code: 'TOOL_NOT_ALLOWED',
      costMicros: ECHO_PRICE,
      detail: {
        failedLine: 2,
        failedTool: 'everything__get-env',
        calls: [
          { tool: 'everything__echo', line: 1, ok: true },
          { tool: 'everything__get-env', line: 2, ok: false, code: 'TOOL_NOT_ALLOWED' },
        ],
      },
    });
  });

  it('should agree with the ledger on every call of the org: ids and costs', async () => {
    const steps = (await trailOf(meta.orgId, 'limit=500')).body.steps as any[];
    const fromTrail = new Map<string, number>();
    for (const s of steps) {
      if (s.kind === 'CALL' && s.callId) fromTrail.set(s.callId, s.costMicros);
      if (s.kind === 'SCRIPT') for (const c of s.detail.calls) if (c.callId) fromTrail.set(c.callId, c.costMicros);
    }
    const ledger = await db.usageEvent.findMany({ where: { orgId: meta.orgId } });
    expect(new Map(ledger.map((e) => [e.id, Number(e.costMicros)]))).toEqual(fromTrail);
    expect(fromTrail.size).toBe(4);
  });

  it('should record a session’s resource reads and prompt gets, each linked to the list that showed it, and a stateless 2026-07-28 read without a session', async () => {
    const a = await agent(p.edgeUrl, meta.progressiveKey.secret);
    const resources = await a.listResources();
    expect(resources.resources.map((r) => r.uri)).toContain(ARCHITECTURE);
    const templates = await a.listResourceTemplates();
    const dynamic = templates.resourceTemplates.find((t) => t.uriTemplate.includes('dynamic/text'))!.uriTemplate;
    const prompts = await a.listPrompts();
    expect(prompts.prompts.map((x) => x.name)).toContain('everything__args-prompt');
    const read = await a.readResource({ uri: ARCHITECTURE });
    await a.getPrompt({ name: 'everything__args-prompt', arguments: { city: 'Paris' } });
    const fromTemplate = dynamic.replace(/\{[^}]*\}/, '7');
    await a.readResource({ uri: fromTemplate });
    const stateless = await fetch(`${edge2Url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${meta.progressiveKey.secret}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'resources/read',
        'mcp-name': ARCHITECTURE,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'resources/read',
        params: {
          uri: ARCHITECTURE,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    expect(stateless.status, await stateless.clone().text()).toBe(200);
    const sessionId = (a.transport as { sessionId?: string }).sessionId!;
    const items = () =>
      db.trailEvent.count({ where: { orgId: meta.orgId, kind: { in: ['RESOURCE_READ', 'PROMPT_GET'] } } });
    await waitForTrailSteps(p.env.redisUrl, p.env.redisPrefix, items, 4);
    const session = (await trailOf(meta.orgId, `sessionId=${sessionId}`)).body.steps as any[];
    const list = (name: string) => session.find((s) => s.name === name);
    expect(list('resources/list')).toMatchObject({
      kind: 'RESOURCES_LIST',
      detail: { names: expect.arrayContaining([ARCHITECTURE]) },
    });
    expect(list('resources/templates/list')).toMatchObject({
      kind: 'RESOURCES_LIST',
      detail: { templates: expect.arrayContaining([dynamic]) },
    });
    expect(list('prompts/list')).toMatchObject({
      kind: 'PROMPTS_LIST',
      detail: { names: expect.arrayContaining(['everything__args-prompt']) },
    });
    const steps = (await trailOf(meta.orgId, 'kind=RESOURCE_READ,PROMPT_GET')).body.steps as any[];
    // The read and the get name the list the agent saw them in, a templated URI its template's list;
    // a read without a session has no list to follow.
    expect(steps.map((s) => [s.kind, s.name, s.sessionId, s.ledBy])).toEqual([
      ['RESOURCE_READ', ARCHITECTURE, sessionId, list('resources/list').id],
      ['PROMPT_GET', 'everything__args-prompt', sessionId, list('prompts/list').id],
      ['RESOURCE_READ', fromTemplate, sessionId, list('resources/templates/list').id],
      ['RESOURCE_READ', ARCHITECTURE, null, null],
    ]);
    expect(steps[0]).toMatchObject({ ok: true, callId: (read._meta as any)['tollgate/call'].callId });
  });

  it('should keep arguments and answers in a full-content org, never a secret-looking value or the key', async () => {
    const a = await agent(edge2Url, full.progressiveKey.secret);
    const res = await a.callTool({
      name: 'everything__echo',
      arguments: { message: 'deploy with Bearer abcdefghijklmnopqrstuvwxyz0123 and sk-live0123456789abcdefghij' },
    });
    await a.callTool({
      name: 'tollgate__search_tools',
      arguments: { query: 'echo with key sk-live0123456789abcdefghij' },
    });
    const script = await agent(p.edgeUrl, full.codeKey.secret);
    await script.callTool({
      name: 'tollgate__run_script',
      arguments: {
        code: `const api_key = "ghp_${'A'.repeat(36)}";\nreturn await everything.echo({ message: 'ok' });`,
        timeoutMs: SCRIPT_TIME_MS,
      },
    });
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [(res._meta as any)['tollgate/call'].callId]);
    await waitForTrailSteps(p.env.redisUrl, p.env.redisPrefix, stepCount(full.orgId), 3);
    const rows = await db.trailEvent.findMany({ where: { orgId: full.orgId }, orderBy: { id: 'asc' } });
    const call = rows.find((r) => r.kind === 'CALL')!;
    expect(call.content).toMatchObject({
      arguments: { message: 'deploy with [redacted] and [redacted]' },
      answer: 'Echo: deploy with [redacted] and [redacted]',
    });
    const scriptRow = rows.find((r) => r.kind === 'SCRIPT')!;
    expect((scriptRow.content as any).code).toBe(
      `const api_key = "[redacted]";\nreturn await everything.echo({ message: 'ok' });`,
    );
    // Each inner call with what the tool returned.
    expect((scriptRow.content as any).calls).toEqual([
      {
        tool: 'everything__echo',
        line: 2,
        arguments: { message: 'ok' },
        returned: [{ type: 'text', text: 'Echo: ok' }],
      },
    ]);
    const all = asText(rows);
    for (const secret of [
      full.progressiveKey.secret,
      full.codeKey.secret,
      'abcdefghijklmnopqrstuvwxyz0123',
      'sk-live',
      'ghp_',
    ])
      expect(all).not.toContain(secret);
  });

  it('should show a member only their own steps and name the field of a bad filter', async () => {
    const other = (await p.admin('POST', `/v1/orgs/${meta.orgId}/users`, { email: 'other@example.test' })).body.id;
    const token = async (body: Record<string, unknown>) =>
      (await p.admin('POST', '/v1/admin-tokens', { orgId: meta.orgId, name: randomUUID(), ...body })).body.secret;
    const own = await trailOf(meta.orgId, 'limit=5', await token({ role: 'MEMBER', userId: meta.userId }));
    expect(own.status).toBe(200);
    expect(own.body.steps.length).toBeGreaterThan(0);
    expect(own.body.steps.every((s: { userId: string }) => s.userId === meta.userId)).toBe(true);
    const stranger = await trailOf(meta.orgId, '', await token({ role: 'MEMBER', userId: other }));
    expect(stranger.body).toMatchObject({ steps: [], summary: { steps: 0 } });
    expect(
      (await trailOf(meta.orgId, `userId=${meta.userId}`, await token({ role: 'MEMBER', userId: other }))).status,
    ).toBe(403);
    for (const [query, field] of [
      ['kind=SEARCHES', 'kind'],
      ['from=yesterday', 'from'],
      ['keyId=nope', 'keyId'],
      ['cursor=zzz', 'cursor'],
      ['limit=0', 'limit'],
      ['limit=100000', 'limit'],
      ['from=2026-13-45T00:00:00Z', 'from'],
      ['to=%2B275760-09-13T00:00:00Z', 'to'],
      ['sessionId=%00', 'sessionId'],
      [`sessionId=${'s'.repeat(300)}`, 'sessionId'],
      [`kind=${'CALL,'.repeat(100)}`, 'kind'],
      [`keyId=${Array.from({ length: 101 }, () => randomUUID()).join(',')}`, 'keyId'],
    ]) {
      const bad = await trailOf(meta.orgId, query);
      expect(bad.status, query).toBe(400);
      expect(JSON.stringify(bad.body), query).toContain(field);
    }
  });

  it('should give a team admin exactly the team’s keys’ steps, a member exactly their own, and a key filter exactly that key’s', async () => {
    // A second team with its own member and key, beside the first team's user and two keys.
    const teamB = (await p.admin('POST', `/v1/orgs/${meta.orgId}/teams`, { name: 'team-b' })).body.id;
    const userB = (await p.admin('POST', `/v1/orgs/${meta.orgId}/users`, { email: 'b@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${meta.orgId}/teams/${teamB}/members`, { userId: userB });
    const keyB = (
      await p.admin('POST', `/v1/orgs/${meta.orgId}/keys`, {
        teamId: teamB,
        userId: userB,
        name: 'b',
        disclosureMode: 'PROGRESSIVE',
      })
    ).body;
    const lead = (await p.admin('POST', `/v1/orgs/${meta.orgId}/users`, { email: 'lead@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${meta.orgId}/teams/${meta.teamId}/members`, { userId: lead, isTeamAdmin: true });
    const b = await agent(edge2Url, keyB.secret);
    await b.listTools();
    await b.callTool({ name: 'tollgate__search_tools', arguments: { query: 'echo' } });
    const keyCount = (keyId: string) => () => db.trailEvent.count({ where: { orgId: meta.orgId, keyId } });
    // The code key has steps from the tests before: wait for this one on top of them, so no step
    // of it can land between the API's answer and the database's below.
    const codeStepsBefore = await keyCount(meta.codeKey.id)();
    const code = await agent(p.edgeUrl, meta.codeKey.secret);
    await code.callTool({ name: 'tollgate__list_files', arguments: {} });
    await waitForTrailSteps(p.env.redisUrl, p.env.redisPrefix, keyCount(keyB.key.id), 2);
    await waitForTrailSteps(p.env.redisUrl, p.env.redisPrefix, keyCount(meta.codeKey.id), codeStepsBefore + 1);

    const token = async (body: Record<string, unknown>) => {
      const res = await p.admin('POST', '/v1/admin-tokens', { orgId: meta.orgId, name: randomUUID(), ...body });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.secret as string;
    };
    const ids = async (query: string, tokenSecret?: string): Promise<string[]> => {
      const res = await trailOf(meta.orgId, `limit=500&${query}`, tokenSecret);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.nextCursor).toBeNull();
      expect(res.body.summary.steps).toBe(res.body.steps.length);
      return (res.body.steps as { id: string }[]).map((s) => s.id).sort();
    };
    const stored = async (where: Record<string, unknown>) =>
      (await db.trailEvent.findMany({ where: { orgId: meta.orgId, ...where }, select: { id: true } }))
        .map((r) => r.id)
        .sort();

    // A key filter answers that key's steps, all of them and nothing else (the org admin sees all keys).
    const progressive = await ids(`keyId=${meta.progressiveKey.id}`);
    expect(progressive).toEqual(await stored({ keyId: meta.progressiveKey.id }));
    expect(await ids(`keyId=${meta.codeKey.id}`)).toEqual(await stored({ keyId: meta.codeKey.id }));
    expect(await ids(`keyId=${keyB.key.id}`)).toEqual(await stored({ keyId: keyB.key.id }));
    expect(await ids(`keyId=${meta.progressiveKey.id},${keyB.key.id}`)).toEqual(
      await stored({ keyId: { in: [meta.progressiveKey.id, keyB.key.id] } }),
    );

    // The first team's admin: both of its keys' steps, none of the second team's.
    const teamAdmin = await token({ role: 'TEAM_ADMIN', teamId: meta.teamId, userId: lead });
    const teamSteps = await stored({ teamId: meta.teamId });
    expect(teamSteps).toEqual(await stored({ keyId: { in: [meta.progressiveKey.id, meta.codeKey.id] } }));
    expect(await ids('', teamAdmin)).toEqual(teamSteps);
    expect(await ids(`keyId=${meta.codeKey.id}`, teamAdmin)).toEqual(await stored({ keyId: meta.codeKey.id }));
    // Another team's key selects nothing (the team filter is forced, as on the call log); naming the
    // other team is refused.
    expect(await ids(`keyId=${keyB.key.id}`, teamAdmin)).toEqual([]);
    expect((await trailOf(meta.orgId, `teamId=${teamB}`, teamAdmin)).status).toBe(403);

    // The second team's member: their own key's steps only.
    const memberB = await token({ role: 'MEMBER', userId: userB });
    expect(await ids('', memberB)).toEqual(await stored({ keyId: keyB.key.id }));
    expect(await ids(`keyId=${meta.progressiveKey.id}`, memberB)).toEqual([]);
    expect((await trailOf(meta.orgId, `userId=${meta.userId}`, memberB)).status).toBe(403);
    // The first team's member: both their keys, none of the second team's.
    expect(await ids('', await token({ role: 'MEMBER', userId: meta.userId }))).toEqual(
      await stored({ userId: meta.userId }),
    );
  });

  it('should export a session as JSON lines', async () => {
    const first = (await trailOf(meta.orgId, 'kind=SEARCH&limit=1')).body.steps[0];
    const res = await fetch(
      `${p.adminUrl}/v1/orgs/${meta.orgId}/trail/export?sessionId=${encodeURIComponent(first.sessionId)}`,
      { headers: { Authorization: `Bearer ${p.adminToken}` } },
    );
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const page = (await trailOf(meta.orgId, `sessionId=${encodeURIComponent(first.sessionId)}`)).body.steps;
    expect(lines).toEqual(page);
  });

  it('should delete steps older than the org’s retention and keep the others', async () => {
    expect((await p.admin('PATCH', `/v1/orgs/${meta.orgId}`, { trailRetentionDays: 7 })).status).toBe(200);
    const old: TrailEvent = {
      id: `00000000000001-000001-${randomUUID().slice(0, 12)}`,
      orgId: meta.orgId,
      teamId: meta.teamId,
      userId: meta.userId,
      keyId: meta.progressiveKey.id,
      sessionId: 'old-session',
      kind: 'SEARCH',
      name: 'tollgate__search_tools',
      catalogVersion: null,
      tokens: 10,
      ok: true,
      code: null,
      callId: null,
      costMicros: null,
      detail: { query: 'old' },
      content: null,
      occurredAt: new Date(Date.now() - 8 * 86_400_000),
    };
    const before = await db.trailEvent.count({ where: { orgId: meta.orgId } });
    const redis = testRedisClient(p.env.redisUrl);
    await redis.xadd(usageOutboxKeys(p.env.redisPrefix, shardOf(meta.orgId)).events, '*', ...trailEntryFields(old));
    redis.disconnect();
    await waitForTrailSteps(p.env.redisUrl, p.env.redisPrefix, stepCount(meta.orgId), before + 1);
    // The worker's upkeep (every 10 minutes), run now.
    const upkeep = new Queue(QueueName.UsageRollup, testBullOptions(p.env.redisUrl, p.env.redisPrefix));
    const job = await upkeep.add(JobName.RollupUsage, { orgId: meta.orgId }, { jobId: `test-upkeep-${Date.now()}` });
    await upkeep.close();
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.UsageRollup, [job.id!]);
    expect(await db.trailEvent.count({ where: { orgId: meta.orgId, sessionId: 'old-session' } })).toBe(0);
    expect(await db.trailEvent.count({ where: { orgId: meta.orgId } })).toBe(before);
  });
});
