import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { QueueName } from '@tollgate/queue';
import { connectAgent, waitForJobs } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';

/** Counts the `notifications/tools/list_changed` a client hears; `next()` resolves on the next one. */
function listChanges(client: Client): { count: () => number; next: () => Promise<void> } {
  let count = 0;
  let waiters: (() => void)[] = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    count++;
    const woken = waiters;
    waiters = [];
    for (const w of woken) w();
  });
  return { count: () => count, next: () => new Promise<void>((resolve) => waiters.push(resolve)) };
}

/**
 * A catalog or policy change reaches the sessions whose visible lists it changes, and no other:
 * two keys of one org with different allow-lists, each in a session with its notification stream.
 */
describe('list_changed only to the sessions a change concerns', () => {
  let p: RunningPlatform;
  let upstream: FixtureServer;
  let orgId: string;
  const keys: { id: string; secret: string }[] = [];
  const agents: Client[] = [];

  const setKeyPolicy = (keyId: string, allow: string[]) =>
    p.admin('PUT', `/v1/orgs/${orgId}/policies/KEY/${keyId}`, { allow, deny: [] });
  // The upstream's tools the agent lists (beside Tollgate's own, such as tollgate__read_result_page).
  const toolNames = async (agent: Client) =>
    (await agent.listTools()).tools
      .map((t) => t.name)
      .filter((n) => n.startsWith('fx__'))
      .sort();

  beforeAll(async () => {
    p = await startPlatform();
    upstream = await startFixtureServer();
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Scope', slug: 'scope' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    for (const email of ['ann@scope.test', 'ben@scope.test']) {
      const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email })).body.id;
      await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
      const key = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: email })).body;
      keys.push({ id: key.key.id, secret: key.secret });
    }
    const up = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'fx',
      transport: 'STREAMABLE_HTTP',
      url: upstream.url,
    });
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${up.body.id}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['fx:*'], deny: [] });
    // Ann sees ping and slow, Ben ping and fail.
    await setKeyPolicy(keys[0].id, ['fx:ping', 'fx:slow']);
    await setKeyPolicy(keys[1].id, ['fx:ping', 'fx:fail']);
    for (const key of keys) agents.push(await connectAgent(p.edgeUrl, key.secret, 'scope-agent'));
  });

  afterAll(async () => {
    await Promise.allSettled(agents.map((a) => a.close()));
    await upstream?.close();
    await p?.close();
  });

  it("should tell only the session whose key's visible tools changed, and nobody of a budget change", async () => {
    const [ann, ben] = agents;
    expect(await toolNames(ann)).toEqual(['fx__ping', 'fx__slow']);
    expect(await toolNames(ben)).toEqual(['fx__fail', 'fx__ping']);
    const annHears = listChanges(ann);
    const benHears = listChanges(ben);

    // A change that both see (the org denies ping): both sessions hear it.
    const bothHeard = Promise.all([annHears.next(), benHears.next()]);
    await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, { allow: ['fx:*'], deny: ['fx:ping'] });
    await bothHeard;
    expect(await toolNames(ann)).toEqual(['fx__slow']);
    const [annBefore, benBefore] = [annHears.count(), benHears.count()];

    // A budget for the org changes no list; then a change of Ann's key policy changes only hers.
    const budget = await p.admin('PUT', `/v1/orgs/${orgId}/budgets`, {
      scope: 'ORG',
      scopeId: orgId,
      period: 'MONTH',
      limitMicros: 50_000_000,
    });
    expect(budget.status).toBe(200);
    let annHeard = annHears.next();
    await setKeyPolicy(keys[0].id, ['fx:ping', 'fx:slow', 'fx:huge']);
    await annHeard;
    expect(await toolNames(ann)).toEqual(['fx__huge', 'fx__slow']);

    // Then Ben's: his stream hears this one only. An edge rechecks one org's changes in order, on
    // one ordered stream per session: had the budget or Ann's change reached Ben, he would have
    // heard it before this.
    const benHeard = benHears.next();
    await setKeyPolicy(keys[1].id, ['fx:fail', 'fx:huge']);
    await benHeard;
    expect(benHears.count()).toBe(benBefore + 1);
    expect(await toolNames(ben)).toEqual(['fx__fail', 'fx__huge']);

    // Likewise Ann heard nothing of Ben's change: her next notification is her own.
    annHeard = annHears.next();
    await setKeyPolicy(keys[0].id, ['fx:slow']);
    await annHeard;
    expect(annHears.count()).toBe(annBefore + 2);
    expect(await toolNames(ann)).toEqual(['fx__slow']);
  });
});
