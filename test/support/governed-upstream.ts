import type { INestApplication } from '@nestjs/common';
import { loadEdgeConfig } from '@tollgate/config';
import { QueueName } from '@tollgate/queue';
import { TestClock, waitForJobs } from '@tollgate/testing';
import { expect } from 'vitest';
import { createEdgeApp } from '../../apps/mcp-edge/src/edge-app';
import type { RunningPlatform } from './platform';

/** An org with one team, one member and one synced, allowed and priced upstream. */
export interface GovernedUpstream {
  orgId: string;
  teamId: string;
  userId: string;
  upstreamId: string;
  /** A new key of the org's team and member. */
  newKey(name: string): Promise<{ key: string; keyId: string }>;
}

/**
 * Sets up, through the admin API, what an agent needs to call an upstream's tools through the
 * edge: the org, its team and member, the upstream (synced, every tool allowed by org policy,
 * priced per call and per output token), optionally exposed unprefixed and under an org budget.
 */
export async function governUpstream(
  p: RunningPlatform,
  o: {
    org: { name: string; slug: string };
    upstream: { namespace: string; url: string; callTimeoutMs: number };
    price: { perCallMicros: bigint; perOutputTokenMicros?: bigint };
    exposeUnprefixed?: boolean;
    orgMonthlyBudgetMicros?: number;
  },
): Promise<GovernedUpstream> {
  const orgId = (await p.admin('POST', '/v1/orgs', o.org)).body.id as string;
  const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id as string;
  const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: `${o.org.slug}@example.test` })).body
    .id as string;
  await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
  const upstreamId = (
    await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, { ...o.upstream, transport: 'STREAMABLE_HTTP' })
  ).body.id as string;
  const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstreamId}/sync`);
  await waitForJobs(p.env.redis, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
  if (o.exposeUnprefixed) {
    const exposure = await p.admin('PUT', `/v1/orgs/${orgId}/upstreams/${upstreamId}/exposure`, {
      exposeUnprefixed: true,
    });
    expect(exposure.status).toBe(200);
  }
  const policy = { allow: [`${o.upstream.namespace}:*`], deny: [] };
  expect((await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, policy)).status).toBe(200);
  const price = {
    upstreamId,
    toolPattern: '*',
    perCallMicros: Number(o.price.perCallMicros),
    ...(o.price.perOutputTokenMicros === undefined
      ? {}
      : { perOutputTokenMicros: Number(o.price.perOutputTokenMicros) }),
  };
  expect((await p.admin('POST', `/v1/orgs/${orgId}/prices`, price)).status).toBe(201);
  if (o.orgMonthlyBudgetMicros !== undefined) {
    const budget = { scope: 'ORG', scopeId: orgId, period: 'MONTH', limitMicros: o.orgMonthlyBudgetMicros };
    expect((await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, budget)).status).toBe(200);
  }
  return {
    orgId,
    teamId,
    userId,
    upstreamId,
    async newKey(name) {
      const created = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name })).body;
      return { key: created.secret as string, keyId: created.key.id as string };
    },
  };
}

/**
 * Another edge of the platform's deployment (same database and Redis), with settings of its own;
 * `clock`: its time (a TestClock the test moves), else the system clock.
 */
export async function startAnotherEdge(
  p: RunningPlatform,
  overrides: Record<string, string> = {},
  clock?: TestClock,
): Promise<{ app: INestApplication; url: string }> {
  const app = await createEdgeApp(loadEdgeConfig({ ...p.env.vars, ...overrides }), clock);
  await app.listen(0, '127.0.0.1');
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
}
