import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { QueueName } from '@tollgate/queue';
import { connectAgent, waitForJobs, waitForUsageEvents } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConformanceServer, startConformanceServer } from '../fixtures/conformance-server';
import { RunningPlatform, startPlatform } from '../support/platform';

// Completions and resource subscriptions are governed like reads and gets: a price rule may target
// them (`completion:<prompt or template>`, `subscription:<uri>`), each is reserved against the
// budgets, settled, and written to the ledger under that name.
describe('Completions and subscriptions priced and metered like other items', () => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let fixture: ConformanceServer;
  let agent: Client;
  let keyId: string;

  beforeAll(async () => {
    p = await startPlatform();
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    fixture = await startConformanceServer();
    const orgId = (await p.admin('POST', '/v1/orgs', { name: 'Items', slug: 'items' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'i@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const created = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'items' })).body;
    keyId = created.key.id;
    const upstreamId = (
      await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
        namespace: 'conf',
        transport: 'STREAMABLE_HTTP',
        url: fixture.url,
      })
    ).body.id;
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    const policy = { allow: ['conf:*'], deny: [], resourceAllow: ['conf:*'], promptAllow: ['conf:*'] };
    expect((await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, policy)).status).toBe(200);
    const prices = [
      { toolPattern: 'completion:test_prompt_*', perCallMicros: 70, perOutputTokenMicros: 3 },
      { toolPattern: 'subscription:test://*', perCallMicros: 500 },
    ];
    for (const price of prices)
      expect((await p.admin('POST', `/v1/orgs/${orgId}/prices`, { upstreamId, ...price })).status).toBe(201);
    // A price pattern of a kind the book does not know is still refused, naming the field.
    const bad = await p.admin('POST', `/v1/orgs/${orgId}/prices`, { toolPattern: 'completion:', perCallMicros: 1 });
    expect(bad.status).toBe(400);
    agent = await connectAgent(p.edgeUrl, created.secret);
  }, 120_000);

  afterAll(async () => {
    await agent?.close();
    await db?.$disconnect();
    await p?.close();
    await fixture?.close();
  });

  it('should charge a completion by its price rule and write one ledger row under completion:<prompt>', async () => {
    const result = await agent.complete({
      ref: { type: 'ref/prompt', name: 'conf__test_prompt_with_arguments' },
      argument: { name: 'arg1', value: 'al' },
    });
    expect(result.completion.values).toEqual(['alpha', 'alpine']);
    const meta = result._meta?.['tollgate/call'] as { callId: string; costMicros: number; outputTokens: number };
    expect(meta.outputTokens).toBeGreaterThan(0);
    expect(meta.costMicros).toBe(70 + 3 * meta.outputTokens);
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [meta.callId]);
    const row = await db.usageEvent.findFirstOrThrow({ where: { id: meta.callId } });
    expect(row).toMatchObject({
      keyId,
      toolName: 'completion:test_prompt_with_arguments',
      outcome: 'OK',
      costMicros: BigInt(meta.costMicros),
    });
  }, 60_000);

  it('should charge a resource subscription by its price rule and write one ledger row under subscription:<uri>', async () => {
    const result = await agent.subscribeResource({ uri: 'test://watched-resource' });
    const meta = result._meta?.['tollgate/call'] as { callId: string; costMicros: number };
    expect(meta.costMicros).toBe(500);
    await waitForUsageEvents(p.env.redisUrl, p.env.redisPrefix, [meta.callId]);
    const row = await db.usageEvent.findFirstOrThrow({ where: { id: meta.callId } });
    expect(row).toMatchObject({ keyId, toolName: 'subscription:test://watched-resource', costMicros: 500n });
  }, 60_000);
});
