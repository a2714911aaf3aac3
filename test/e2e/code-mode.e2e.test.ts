import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { QueueName } from '@tollgate/queue';
import { SERVER_EVERYTHING, connectAgent, textOf, toolError, waitForJobs, waitForUsageEvents } from '@tollgate/testing';
import { countJsonTokens } from '@tollgate/tokens';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunningPlatform, startPlatform } from '../support/platform';
import { SCRIPT_TIME_MS } from '../support/code-mode';

const ECHO_PRICE = 100_000;
const SUM_PRICE = 50_000;

type CallResult = Awaited<ReturnType<Client['callTool']>>;

function answerOf(res: CallResult): any {
  return JSON.parse(textOf(res as never));
}

describe('code mode through the edge', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let orgId: string;
  let agent: Client;
  let budgetKeyId: string;
  let budgetAgent: Client;
  let progressiveAgent: Client;

  beforeAll(async () => {
    p = await startPlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Coders', slug: 'coders' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'c@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const upstream = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'everything',
      transport: 'STDIO',
      ...SERVER_EVERYTHING,
    });
    expect(upstream.status).toBe(201);
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstream.body.id}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, {
          allow: ['everything:*'],
          deny: ['everything:get-env'],
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
          upstreamId: upstream.body.id,
          toolPattern: 'echo',
          perCallMicros: ECHO_PRICE,
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/prices`, {
          upstreamId: upstream.body.id,
          toolPattern: 'get-sum',
          perCallMicros: SUM_PRICE,
        })
      ).status,
    ).toBe(201);

    const key = (
      await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'coder', disclosureMode: 'CODE' })
    ).body;
    const budgetKey = (
      await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'thrifty', disclosureMode: 'CODE' })
    ).body;
    budgetKeyId = budgetKey.key.id;
    // Room for two echoes, not three.
    expect(
      (
        await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
          scope: 'KEY',
          scopeId: budgetKeyId,
          period: 'MONTH',
          limitMicros: ECHO_PRICE * 2 + ECHO_PRICE / 2,
        })
      ).status,
    ).toBe(200);
    const progressiveKey = (
      await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'plain', disclosureMode: 'PROGRESSIVE' })
    ).body;
    agent = await connectAgent(p.edgeUrl, key.secret);
    budgetAgent = await connectAgent(p.edgeUrl, budgetKey.secret);
    progressiveAgent = await connectAgent(p.edgeUrl, progressiveKey.secret);
  });

  afterAll(async () => {
    await agent?.close();
    await budgetAgent?.close();
    await progressiveAgent?.close();
    await db?.$disconnect();
    await p?.close();
  });

  it('should list the code-mode meta-tools instead of the catalog when the key is in code mode', async () => {
    const res = await agent.listTools();
    const names = res.tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'tollgate__list_files',
        'tollgate__read_files',
        'tollgate__get_tool_docs',
        'tollgate__run_script',
      ]),
    );
    expect(names.filter((n) => n.startsWith('everything__'))).toEqual([]);
    const meta = (res._meta as any)['tollgate/disclosure'];
    expect(meta).toMatchObject({ mode: 'CODE' });
    expect(meta.tokens).toBe(countJsonTokens({ tools: res.tools }));
  });

  it('should list the virtual file tree within the token budget and page it with a cursor', async () => {
    const root = answerOf(await agent.callTool({ name: 'tollgate__list_files', arguments: {} }));
    expect(root.dirs).toEqual([{ path: 'servers/everything/', files: expect.any(Number) }]);
    const paths: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await agent.callTool({
        name: 'tollgate__list_files',
        arguments: { path: 'servers/everything/', maxTokens: 150, ...(cursor ? { cursor } : {}) },
      });
      const page = answerOf(res);
      expect(page.tokens).toBeLessThanOrEqual(150);
      paths.push(...page.files.map((f: { path: string }) => f.path));
      cursor = page.cursor;
      pages++;
    } while (cursor);
    expect(pages).toBeGreaterThan(1);
    expect(paths.length).toBe(root.dirs[0].files);
    expect(new Set(paths).size).toBe(paths.length);
    expect(paths).toEqual(expect.arrayContaining(['servers/everything/echo.d.ts', 'servers/everything/get-sum.d.ts']));
    expect(paths).not.toContain('servers/everything/get-env.d.ts');
  });

  it('should read a typed stub with its doc line and the full docs of a tool', async () => {
    const read = answerOf(
      await agent.callTool({
        name: 'tollgate__read_files',
        arguments: { paths: ['servers/everything/get-sum.d.ts', 'servers/everything/get-env.d.ts'] },
      }),
    );
    expect(read.files).toHaveLength(1);
    expect(read.files[0].content).toContain('declare namespace everything {');
    expect(read.files[0].content).toContain('/** Returns the sum of two numbers */');
    expect(read.files[0].content).toMatch(/function get_sum\(args: \{ a: number; b: number \}\): Promise<unknown>;/);
    expect(read.unknown).toEqual(['servers/everything/get-env.d.ts']);
    const docs = answerOf(
      await agent.callTool({
        name: 'tollgate__get_tool_docs',
        arguments: { paths: ['servers/everything/get-sum.d.ts'] },
      }),
    );
    expect(docs.tools[0]).toMatchObject({
      name: 'everything__get-sum',
      inputSchema: { properties: { a: expect.any(Object), b: expect.any(Object) } },
    });
    expect(docs.tokens).toBeGreaterThan(0);
  });

  it('should run a script that calls two upstream tools, price each call and write each to the ledger', async () => {
    const code = [
      `const echoed = await everything.echo({ message: 'hello' });`,
      `const sum = await everything.get_sum({ a: 2, b: 3 });`,
      `console.log('got', echoed);`,
      `return { echoed, total: Number(sum.match(/is (\\d+)/)[1]) };`,
    ].join('\n');
    const res = await agent.callTool({
      name: 'tollgate__run_script',
      arguments: { code, timeoutMs: SCRIPT_TIME_MS },
    });
    expect(res.isError ?? false).toBe(false);
    const answer = answerOf(res);
    expect(answer).toMatchObject({
      ok: true,
      result: { echoed: 'Echo: hello', total: 5 },
      logs: ['got Echo: hello'],
      costMicros: ECHO_PRICE + SUM_PRICE,
    });
    expect(answer.calls).toEqual([
      { tool: 'everything__echo', line: 1, ok: true, callId: expect.any(String), costMicros: ECHO_PRICE },
      { tool: 'everything__get-sum', line: 2, ok: true, callId: expect.any(String), costMicros: SUM_PRICE },
    ]);
    expect(answer.tokens).toBeLessThanOrEqual(2_000);
    const callIds = answer.calls.map((c: { callId: string }) => c.callId);
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, callIds);
    const rows = await db.usageEvent.findMany({ where: { id: { in: callIds } } });
    expect(rows.map((r) => [r.toolName, Number(r.costMicros), r.outcome]).sort()).toEqual([
      ['echo', ECHO_PRICE, 'OK'],
      ['get-sum', SUM_PRICE, 'OK'],
    ]);
  });

  it('should give a script the TOOL_NOT_ALLOWED body when it calls a denied tool', async () => {
    const caught = answerOf(
      await agent.callTool({
        name: 'tollgate__run_script',
        arguments: {
          code: `try {\n  await callTool('everything__get-env', {});\n} catch (e) {\n  return { code: e.code, answer: e.answer };\n}`,
        },
      }),
    );
    expect(caught.result).toMatchObject({
      code: 'TOOL_NOT_ALLOWED',
      answer: { code: 'TOOL_NOT_ALLOWED', reason: 'DENIED_BY_RULE', rule: 'everything:get-env' },
    });

    const res = await agent.callTool({
      name: 'tollgate__run_script',
      arguments: {
        code: `const before = 1;\nawait callTool('everything__get-env', { verbose: true });\nreturn before;`,
      },
    });
    expect(res.isError).toBe(true);
    expect(toolError(res as never)).toMatchObject({
      code: 'TOOL_NOT_ALLOWED',
      tool: 'everything__get-env',
      line: 2,
      args: { verbose: true },
      answer: { code: 'TOOL_NOT_ALLOWED', reason: 'DENIED_BY_RULE' },
    });
    expect(answerOf(res).calls).toEqual([
      { tool: 'everything__get-env', line: 2, ok: false, code: 'TOOL_NOT_ALLOWED' },
    ]);
  });

  it('should stop further calls with BUDGET_EXCEEDED when the budget runs out mid-script', async () => {
    const code = `const out = [];\nfor (let i = 0; i < 5; i++) {\n  out.push(await everything.echo({ message: 'n' + i }));\n}\nreturn out;`;
    const res = await budgetAgent.callTool({
      name: 'tollgate__run_script',
      arguments: { code, timeoutMs: SCRIPT_TIME_MS },
    });
    expect(res.isError).toBe(true);
    const answer = answerOf(res);
    expect(answer.error).toMatchObject({
      code: 'BUDGET_EXCEEDED',
      tool: 'everything__echo',
      line: 3,
      args: { message: 'n2' },
      answer: { scope: 'KEY', period: 'MONTH' },
    });
    expect(answer.calls.map((c: { ok: boolean; code?: string }) => c.code ?? 'OK')).toEqual([
      'OK',
      'OK',
      'BUDGET_EXCEEDED',
    ]);
    expect(answer.costMicros).toBe(ECHO_PRICE * 2);
    const callIds = answer.calls.filter((c: { callId?: string }) => c.callId).map((c: { callId: string }) => c.callId);
    expect(callIds).toHaveLength(2);
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, callIds);
    expect(await db.usageEvent.count({ where: { keyId: budgetKeyId } })).toBe(2);
  });

  it('should stop a script at its time limit and say so', async () => {
    const res = await agent.callTool({
      name: 'tollgate__run_script',
      arguments: { code: `let n = 0;\nwhile (true) n++;`, timeoutMs: 300 },
    });
    expect(toolError(res as never)).toMatchObject({ code: 'SCRIPT_LIMIT_EXCEEDED', limit: 'TIME' });
  });

  it('should list a call its time limit cut off, with the id and cost the ledger has for it', async () => {
    const res = await agent.callTool({
      name: 'tollgate__run_script',
      arguments: {
        code: `await callTool('everything__trigger-long-running-operation', { duration: 30, steps: 2 });`,
        timeoutMs: 500,
      },
    });
    expect(toolError(res as never)).toMatchObject({ code: 'SCRIPT_LIMIT_EXCEEDED', limit: 'TIME' });
    const calls = answerOf(res).calls;
    expect(calls).toEqual([
      {
        tool: 'everything__trigger-long-running-operation',
        line: 1,
        ok: false,
        code: 'CANCELLED',
        callId: expect.any(String),
        costMicros: 0,
      },
    ]);
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [calls[0].callId]);
    const rows = await db.usageEvent.findMany({ where: { id: calls[0].callId } });
    expect(rows.map((r) => [Number(r.costMicros), r.outcome])).toEqual([[0, 'UPSTREAM_ERROR']]);
  });

  it('should report a script error with its line when the script throws', async () => {
    const res = await agent.callTool({
      name: 'tollgate__run_script',
      arguments: { code: `const x = {};\nreturn x.missing.field;` },
    });
    expect(toolError(res as never)).toMatchObject({
      code: 'SCRIPT_ERROR',
      kind: 'RUNTIME',
      name: 'TypeError',
      line: 2,
    });
  });

  it('should refuse code-mode tools to a key that is not in code mode', async () => {
    const res = await progressiveAgent.callTool({ name: 'tollgate__run_script', arguments: { code: 'return 1;' } });
    expect(toolError(res as never)?.code).toBe('UNKNOWN_TOOL');
  });
});
