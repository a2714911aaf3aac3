import type { IncomingMessage } from 'node:http';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { QueueName } from '@tollgate/queue';
import { callMeta, connectAgent, toolError, waitForJobs, waitForUsageEvents, testBullOptions } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FixtureServer,
  FixtureTool,
  STANDARD_FIXTURE_TOOLS,
  startFixtureServer,
} from '../fixtures/http-fixture-server';
import { startSseFixtureServer } from '../fixtures/sse-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';

/** Day-2 administration of upstreams, tools, prices and policies, through the admin API and the edge. */
describe('day-2 lifecycle', () => {
  let p: RunningPlatform;
  let fixture: FixtureServer;
  let orgId: string;
  let teamId: string;
  let userId: string;
  let keySecret: string;
  // Secrets the fixture accepts; a call with any other bearer is refused with 401.
  const accepted = new Set(['Bearer old-secret']);
  const seenSecrets: string[] = [];
  let version = 1;
  const tools: FixtureTool[] = [...STANDARD_FIXTURE_TOOLS];

  const waitSync = async (upstreamId: string) => {
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
  };

  beforeAll(async () => {
    p = await startPlatform({ OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32' });
    fixture = await startFixtureServer(tools, {
      intercept: (req: IncomingMessage, res) => {
        const auth = String(req.headers.authorization ?? '');
        seenSecrets.push(auth);
        if (accepted.has(auth)) return false;
        res.writeHead(401, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'unauthorized' }));
        return true;
      },
    });
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Daytwo', slug: 'daytwo' })).body.id;
    teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'd2@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const key = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'agent' })).body;
    keySecret = key.secret;
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['*'], deny: [] });
  });

  afterAll(async () => {
    await p?.close();
    await fixture?.close();
  });

  it('should rotate an upstream secret under load with no failed call, the old secret refused after', async () => {
    const up = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'rot',
        transport: 'STREAMABLE_HTTP',
        url: `${fixture.url}`,
        bearerToken: 'old-secret',
      })
    ).body;
    await waitSync(up.id);
    const agent = await connectAgent(p.edgeUrl, keySecret);
    const results: CallToolResult[] = [];
    let stop = false;
    // Load: four callers at once, two of them with calls that are still running when the secret changes.
    const loop = Promise.all(
      [0, 0, 30, 30].map(async (ms) => {
        while (!stop)
          results.push(
            (await agent.callTool({
              name: ms ? 'rot__slow' : 'rot__ping',
              arguments: ms ? { ms } : {},
            })) as CallToolResult,
          );
      }),
    );
    try {
      while (results.length < 20) await new Promise((r) => setImmediate(r));
      // The switch: the upstream accepts both while the edges move over.
      accepted.add('Bearer new-secret');
      const patched = await p.admin('PATCH', `/v1/orgs/${orgId}/upstreams/${up.id}`, { bearerToken: 'new-secret' });
      expect(patched.status).toBe(200);
      expect(JSON.stringify(patched.body)).not.toContain('new-secret');
      const before = seenSecrets.length;
      while (!seenSecrets.slice(before).includes('Bearer new-secret')) await new Promise((r) => setImmediate(r));
      accepted.delete('Bearer old-secret');
      const after = results.length;
      while (results.length < after + 30) await new Promise((r) => setImmediate(r));
    } finally {
      stop = true;
      await loop;
      await agent.close();
    }
    expect(results.filter((r) => r.isError)).toEqual([]);
    // The old secret is now refused by the upstream.
    const old = await fetch(fixture.url, {
      method: 'POST',
      headers: { Authorization: 'Bearer old-secret', 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(old.status).toBe(401);
    const audit = (await p.admin('GET', `/v1/orgs/${orgId}/audit?limit=20`)).body;
    expect(audit.find((e: { action: string }) => e.action === 'upstream.updated').details.changed).toEqual([
      'bearerToken',
    ]);
    expect(JSON.stringify(audit)).not.toContain('new-secret');
  });

  it('should let calls running on the replaced client finish when an SSE upstream’s headers change under load', async () => {
    // The upstream says when each slow call has started, so the change comes while all four run.
    let started = 0;
    let allStarted: () => void = () => undefined;
    const running4 = new Promise<void>((resolve) => (allStarted = resolve));
    const sse = await startSseFixtureServer(
      STANDARD_FIXTURE_TOOLS.map((t) =>
        t.definition.name === 'slow'
          ? { ...t, run: (args, extra) => (++started === 4 && allStarted(), t.run(args, extra)) }
          : t,
      ),
    );
    const up = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'rot-sse',
        transport: 'SSE',
        url: `${sse.url}`,
        headers: { 'X-Rot': 'v1' },
      })
    ).body;
    await waitSync(up.id);
    const agent = await connectAgent(p.edgeUrl, keySecret);
    const results: CallToolResult[] = [];
    try {
      // Long calls on the pooled SDK client are still running when the settings change replaces it.
      const running = Promise.all(
        [0, 1, 2, 3].map(
          async () => (await agent.callTool({ name: 'rot-sse__slow', arguments: { ms: 1_500 } })) as CallToolResult,
        ),
      );
      await running4;
      expect(
        (await p.admin('PATCH', `/v1/orgs/${orgId}/upstreams/${up.id}`, { headers: { 'X-Rot': 'v2' } })).status,
      ).toBe(200);
      results.push((await agent.callTool({ name: 'rot-sse__ping', arguments: {} })) as CallToolResult);
      results.push(...(await running));
    } finally {
      await agent.close();
      await sse.close();
    }
    expect(results.map((r) => r.isError ?? false)).toEqual([false, false, false, false, false]);
  });

  it('should hide a disabled upstream’s tools from a connected session (list_changed) and refuse its calls, and serve them again once enabled', async () => {
    const up = (await p.admin('GET', `/v1/orgs/${orgId}/upstreams`)).body.find(
      (u: { namespace: string }) => u.namespace === 'rot',
    );
    const agent = await connectAgent(p.edgeUrl, keySecret);
    try {
      expect((await agent.listTools()).tools.map((t) => t.name)).toContain('rot__ping');
      const gone = new Promise<void>((resolve) =>
        agent.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
          if (!(await agent.listTools()).tools.some((t) => t.name.startsWith('rot__'))) resolve();
        }),
      );
      const disabled = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${up.id}/disable`);
      expect(disabled.body.enabled).toBe(false);
      await gone;
      const refused = (await agent.callTool({ name: 'rot__ping', arguments: {} })) as CallToolResult;
      expect(refused.isError).toBe(true);
      expect(toolError(refused)).toMatchObject({ code: 'UPSTREAM_DISABLED', namespace: 'rot' });
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${up.id}/enable`);
      const back = (await agent.callTool({ name: 'rot__ping', arguments: {} })) as CallToolResult;
      expect(back.isError).toBeFalsy();
    } finally {
      await agent.close();
    }
  });

  it('should remove and re-create the sync scheduler when sync is paused and resumed', async () => {
    const up = (await p.admin('GET', `/v1/orgs/${orgId}/upstreams`)).body.find(
      (u: { namespace: string }) => u.namespace === 'rot',
    );
    const schedulers = async () => {
      const { Queue } = await import('bullmq');
      const q = new Queue(QueueName.CatalogSync, testBullOptions(p.env.redisUrl, p.env.redisPrefix));
      try {
        return (await q.getJobSchedulers(0, -1)).map((s) => s.key);
      } finally {
        await q.close();
      }
    };
    expect(await schedulers()).toContain(`sync-${up.id}`);
    const paused = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${up.id}/pause-sync`);
    expect(paused.body.syncPaused).toBe(true);
    expect(await schedulers()).not.toContain(`sync-${up.id}`);
    await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${up.id}/resume-sync`);
    expect(await schedulers()).toContain(`sync-${up.id}`);
  });

  it('should answer 412 to a stale upstream, policy or budget write, and apply one with the current ETag or without If-Match', async () => {
    const up = (await p.admin('GET', `/v1/orgs/${orgId}/upstreams`)).body.find(
      (u: { namespace: string }) => u.namespace === 'rot',
    );
    const read = await fetch(`${p.adminUrl}/v1/orgs/${orgId}/upstreams/${up.id}`, {
      headers: { Authorization: `Bearer ${p.adminToken}` },
    });
    const etag = read.headers.get('etag')!;
    const patch = (ifMatch: string, body: object) =>
      fetch(`${p.adminUrl}/v1/orgs/${orgId}/upstreams/${up.id}`, {
        method: 'PATCH',
        headers: { Authorization: `Bearer ${p.adminToken}`, 'Content-Type': 'application/json', 'If-Match': ifMatch },
        body: JSON.stringify(body),
      });
    expect((await patch(etag, { callTimeoutMs: 20_000 })).status).toBe(200);
    const stale = await patch(etag, { callTimeoutMs: 25_000 });
    expect(stale.status).toBe(412);
    expect(((await stale.json()) as { code: string }).code).toBe('STALE_WRITE');
    expect((await p.admin('GET', `/v1/orgs/${orgId}/upstreams/${up.id}`)).body.callTimeoutMs).toBe(20_000);
    expect((await patch('"x', {})).status).toBe(400);

    const policyUrl = `${p.adminUrl}/v1/orgs/${orgId}/policies/ORG/${orgId}`;
    const policyEtag = (await fetch(policyUrl, { headers: { Authorization: `Bearer ${p.adminToken}` } })).headers.get(
      'etag',
    )!;
    const put = (ifMatch: string) =>
      fetch(policyUrl, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${p.adminToken}`, 'Content-Type': 'application/json', 'If-Match': ifMatch },
        body: JSON.stringify({ allow: ['*'] }),
      });
    expect((await put(policyEtag)).status).toBe(200);
    expect((await put(policyEtag)).status).toBe(412);

    const budgetBody = JSON.stringify({ scope: 'ORG', scopeId: orgId, period: 'MONTH', limitMicros: 1_000_000_000 });
    const first = await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, JSON.parse(budgetBody));
    const putBudget = (ifMatch: string) =>
      fetch(`${p.adminUrl}/v1/orgs/${orgId}/budgets`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${p.adminToken}`, 'Content-Type': 'application/json', 'If-Match': ifMatch },
        body: budgetBody,
      });
    expect((await putBudget(`"${first.body.version}"`)).status).toBe(200);
    expect((await putBudget(`"${first.body.version}"`)).status).toBe(412);
    // No If-Match: last write wins.
    expect((await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, JSON.parse(budgetBody))).status).toBe(200);
  });

  it('should patch a policy, take a deny-only policy, and dry-run a change listing the tools each key gains or loses', async () => {
    const teamPolicy = await p.admin('PUT', `/v1/orgs/${orgId}/policies/TEAM/${teamId}`, { deny: ['rot:slow'] });
    expect(teamPolicy.status).toBe(200);
    expect(teamPolicy.body.allow).toEqual([]);
    const dry = await p.admin('POST', `/v1/orgs/${orgId}/policies/TEAM/${teamId}/dry-run`, {
      deny: { add: ['rot:huge'], remove: ['rot:slow'] },
    });
    expect(dry.status).toBe(200);
    expect(dry.body.changes).toEqual([
      expect.objectContaining({ keyName: 'agent', teamId, userId, gained: ['rot__slow'], lost: ['rot__huge'] }),
    ]);
    // Nothing was written by the dry run.
    expect((await p.admin('GET', `/v1/orgs/${orgId}/policies/TEAM/${teamId}`)).body.deny).toEqual(['rot:slow']);
    const patched = await p.admin('PATCH', `/v1/orgs/${orgId}/policies/TEAM/${teamId}`, {
      deny: { add: ['rot:huge'], remove: ['rot:slow'] },
    });
    expect(patched.body.deny).toEqual(['rot:huge']);
    const agent = await connectAgent(p.edgeUrl, keySecret);
    try {
      const names = (await agent.listTools()).tools.map((t) => t.name);
      expect(names).toContain('rot__slow');
      expect(names).not.toContain('rot__huge');
    } finally {
      await agent.close();
    }
    expect(
      (await p.admin('PATCH', `/v1/orgs/${orgId}/policies/TEAM/${teamId}`, { deny: { add: ['bad pattern!'] } })).body
        .field,
    ).toBe('deny.add[0]');
  });

  it('should approve many pending tools in one request, reporting the one whose hash is stale', async () => {
    const up = (await p.admin('GET', `/v1/orgs/${orgId}/upstreams`)).body.find(
      (u: { namespace: string }) => u.namespace === 'rot',
    );
    await p.admin('PATCH', `/v1/orgs/${orgId}/upstreams/${up.id}`, { autoApproveTools: false });
    for (const t of tools)
      t.definition = { ...t.definition, description: `${t.definition.description} (v${version + 1})` };
    version++;
    await waitSync(up.id);
    const pending = (await p.admin('GET', `/v1/orgs/${orgId}/tools?reviewStatus=PENDING&upstreamId=${up.id}`)).body as {
      id: string;
      definitionHash: string;
      name: string;
    }[];
    expect(pending.length).toBe(tools.length);
    const decisions = pending.map((t, i) => ({
      toolId: t.id,
      decision: 'APPROVE',
      definitionHash: i === 0 ? 'f'.repeat(64) : t.definitionHash,
    }));
    const res = await p.admin('POST', `/v1/orgs/${orgId}/tools/review`, { decisions });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ applied: pending.length - 1, stale: 1, notFound: 0 });
    expect(res.body.results[0]).toMatchObject({
      toolId: pending[0].id,
      result: 'STALE',
      definitionHash: pending[0].definitionHash,
    });
    const after = (await p.admin('GET', `/v1/orgs/${orgId}/tools?reviewStatus=PENDING&upstreamId=${up.id}`)).body;
    expect(after.map((t: { id: string }) => t.id)).toEqual([pending[0].id]);
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/tools/review`, {
          decisions: [{ toolId: 'x', decision: 'APPROVE', definitionHash: 'x' }],
        })
      ).body.field,
    ).toMatch(/^decisions\[0\]\./);
  });

  it('should end a price from a date, never in the past, and list the history', async () => {
    const rule = (await p.admin('POST', `/v1/orgs/${orgId}/prices`, { perCallMicros: 5 })).body;
    expect(
      (await p.admin('POST', `/v1/orgs/${orgId}/prices/${rule.id}/end`, { effectiveUntil: '2020-01-01T00:00:00Z' }))
        .body.field,
    ).toBe('effectiveUntil');
    const agent = await connectAgent(p.edgeUrl, keySecret);
    try {
      const paid = (await agent.callTool({ name: 'rot__ping', arguments: {} })) as CallToolResult;
      expect(callMeta(paid)?.costMicros).toBe(5);
      const ended = await p.admin('POST', `/v1/orgs/${orgId}/prices/${rule.id}/end`, {});
      expect(ended.status).toBe(200);
      expect(ended.body.effectiveUntil).not.toBeNull();
      const free = (await agent.callTool({ name: 'rot__ping', arguments: {} })) as CallToolResult;
      expect(callMeta(free)?.costMicros).toBe(0);
    } finally {
      await agent.close();
    }
    expect((await p.admin('POST', `/v1/orgs/${orgId}/prices/${rule.id}/end`, {})).status).toBe(400);
    const history = (await p.admin('GET', `/v1/orgs/${orgId}/prices/history`)).body;
    expect(history.find((r: { id: string }) => r.id === rule.id)).toMatchObject({ state: 'ENDED' });
  });

  it('should delete an upstream, its tools gone, and keep its past spend in reports under its name', async () => {
    const up = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'gone',
        transport: 'STREAMABLE_HTTP',
        url: `${fixture.url}`,
        bearerToken: 'new-secret',
      })
    ).body;
    await waitSync(up.id);
    await p.admin('POST', `/v1/orgs/${orgId}/prices`, { upstreamId: up.id, perCallMicros: 7 });
    const agent = await connectAgent(p.edgeUrl, keySecret);
    try {
      const paid = (await agent.callTool({ name: 'gone__ping', arguments: {} })) as CallToolResult;
      await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [callMeta(paid)!.callId]);
      expect((await p.admin('DELETE', `/v1/orgs/${orgId}/upstreams/${up.id}`)).status).toBe(200);
      expect((await p.admin('GET', `/v1/orgs/${orgId}/upstreams/${up.id}`)).status).toBe(404);
      expect((await agent.listTools()).tools.map((t) => t.name)).not.toContain('gone__ping');
    } finally {
      await agent.close();
    }
    const day = new Date().toISOString().slice(0, 10);
    const report = (await p.admin('GET', `/v1/orgs/${orgId}/reports/spend?from=${day}&to=${day}&groupBy=upstream`))
      .body;
    expect(report.rows.find((r: { upstreamNamespace: string }) => r.upstreamNamespace === 'gone')?.costMicros).toBe(7);
    // The namespace is free for a new upstream.
    expect(
      (
        await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
          namespace: 'gone',
          transport: 'STREAMABLE_HTTP',
          url: `${fixture.url}`,
        })
      ).status,
    ).toBe(201);
  });
});
