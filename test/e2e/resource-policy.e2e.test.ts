import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { QueueName } from '@tollgate/queue';
import { connectAgent, waitForJobs } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { RunningPlatform, startPlatform } from '../support/platform';
import { statelessRpc } from '../support/stateless-rpc';
import { SCRIPT_TIME_MS } from '../support/code-mode';

const SECRET = 'hunter2-the-password';
const PUBLIC = 'read me, anyone';

// Ways to name the denied file from under the allowed folder (the upstream resolves each to /secret/passwords.txt).
const WALKS = [
  'file:///public/../secret/passwords.txt',
  'file:///public/%2e%2e/secret/passwords.txt',
  'file:///public/%2E%2e/secret/passwords.txt',
  'file:///public/./../secret/passwords.txt',
  'file:///public/sub/../../secret/passwords.txt',
  'FILE:///public/../secret/passwords.txt',
  'tollgate://fx/file:///public/../secret/passwords.txt',
  'tollgate://fx/file:///public/%2e%2e/secret/passwords.txt',
];
// Ways whose meaning depends on how the upstream decodes them: refused whatever they name.
const UNDECIDABLE = ['file:///public%2f..%2fsecret/passwords.txt', 'file:///public/%252e%252e/secret/passwords.txt'];

const LEAKED_CONTENT = [
  { type: 'text', text: 'here is what I found' },
  { type: 'resource', resource: { uri: 'file:///secret/passwords.txt', mimeType: 'text/plain', text: SECRET } },
  { type: 'resource_link', uri: 'file:///public/../secret/passwords.txt', name: 'passwords' },
  { type: 'resource', resource: { uri: 'file:///public/readme.txt', mimeType: 'text/plain', text: PUBLIC } },
];

describe('resource policy on normalised URIs, for reads, subscriptions and embedded resources', () => {
  let p: RunningPlatform;
  let fx: FixtureServer;
  let agent: Client;
  let coder: Client;
  let key: string;

  /** A 2026-07-28 request as raw HTTP (the SDK 1.x client does not speak it). */
  const stateless = (method: string, params: Record<string, unknown>) =>
    statelessRpc(p.edgeUrl, key, method, params, { name: 'resource-policy-e2e', capabilities: {} });

  const failureOf = async (call: Promise<unknown>): Promise<McpError> => {
    const err = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(McpError);
    return err as McpError;
  };

  beforeAll(async () => {
    fx = await startFixtureServer(
      [
        {
          definition: {
            name: 'leak',
            description: 'Answers with embedded resources.',
            inputSchema: { type: 'object' },
          },
          run: () => ({ content: LEAKED_CONTENT as never }),
        },
      ],
      {
        files: { '/public/readme.txt': PUBLIC, '/secret/passwords.txt': SECRET },
        prompts: [
          {
            name: 'leaky',
            messages: [
              { role: 'user', content: { type: 'text', text: 'Summarise this file:' } },
              { role: 'user', content: LEAKED_CONTENT[1] as never },
              { role: 'user', content: LEAKED_CONTENT[3] as never },
            ],
          },
        ],
      },
    );
    p = await startPlatform();
    const orgId = (await p.admin('POST', '/v1/orgs', { name: 'Files', slug: 'files' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'f@example.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const upstream = await p.admin('POST', `/v1/orgs/${orgId}/upstreams`, {
      namespace: 'fx',
      transport: 'STREAMABLE_HTTP',
      url: fx.url,
    });
    expect(upstream.status, JSON.stringify(upstream.body)).toBe(201);
    const sync = await p.admin('POST', `/v1/orgs/${orgId}/upstreams/${upstream.body.id}/sync`);
    await waitForJobs(p.env.redisUrl, p.env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    const policy = await p.admin('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, {
      allow: ['fx:*'],
      deny: [],
      resourceAllow: ['fx:file:///public/*'],
      resourceDeny: ['fx:file:///secret/*'],
      promptAllow: ['fx:*'],
    });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);
    key = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'a', disclosureMode: 'FULL' })).body
      .secret;
    const coderKey = (
      await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'c', disclosureMode: 'CODE' })
    ).body.secret;
    agent = await connectAgent(p.edgeUrl, key);
    coder = await connectAgent(p.edgeUrl, coderKey);
  }, 120_000);

  afterAll(async () => {
    await agent?.close();
    await coder?.close();
    await p?.close();
    await fx?.close();
  });

  it('should read an allowed file and refuse the denied one by name', async () => {
    const read = await agent.readResource({ uri: 'file:///public/readme.txt' });
    expect(read.contents[0]).toMatchObject({ text: PUBLIC });
    const err = await failureOf(agent.readResource({ uri: 'file:///secret/passwords.txt' }));
    expect(err.data).toMatchObject({ code: 'RESOURCE_NOT_ALLOWED', rule: 'fx:file:///secret/*' });
  });

  it.each(WALKS)('should refuse %s (2025-11-25: read and subscribe) by the deny rule', async (uri) => {
    const reads = fx.reads.length;
    const read = await failureOf(agent.readResource({ uri }));
    expect(read.data).toMatchObject({ code: 'RESOURCE_NOT_ALLOWED', rule: 'fx:file:///secret/*' });
    const subscribe = await failureOf(agent.subscribeResource({ uri }));
    expect(subscribe.data).toMatchObject({ code: 'RESOURCE_NOT_ALLOWED', rule: 'fx:file:///secret/*' });
    expect(fx.reads.length).toBe(reads);
    expect(fx.subscriptions).not.toContain('/secret/passwords.txt');
  });

  it.each(WALKS)('should refuse %s (2026-07-28) by the deny rule', async (uri) => {
    const reads = fx.reads.length;
    const answer = await stateless('resources/read', { uri });
    expect(JSON.stringify(answer)).not.toContain(SECRET);
    expect(answer.error?.data).toMatchObject({ code: 'RESOURCE_NOT_ALLOWED', rule: 'fx:file:///secret/*' });
    expect(fx.reads.length).toBe(reads);
  });

  it.each(UNDECIDABLE)('should refuse %s, whose meaning depends on how the upstream decodes it', async (uri) => {
    const reads = fx.reads.length;
    const err = await failureOf(agent.readResource({ uri }));
    expect(err.message).toMatch(/cannot be decided|decode/);
    expect(JSON.stringify((await stateless('resources/read', { uri })).error)).toMatch(/decode/);
    expect(fx.reads.length).toBe(reads);
  });

  it('should read a dot-segment URI that stays inside the allowed folder', async () => {
    const read = await agent.readResource({ uri: 'file:///public/sub/../readme.txt' });
    expect(read.contents[0]).toMatchObject({ text: PUBLIC });
  });

  const expectWithheld = (content: unknown[]) => {
    const text = JSON.stringify(content);
    expect(text).not.toContain(SECRET);
    const markers = content.filter((c) => JSON.stringify(c).includes('withheld'));
    // The embedded secret and the link to it, each replaced by a marker that names the resource.
    expect(markers).toHaveLength(2);
    for (const m of markers)
      expect(m).toMatchObject({
        type: 'text',
        text: expect.stringMatching(/^\[Resource file:\/\/\/.*passwords\.txt withheld/),
      });
    expect(text).toContain(PUBLIC);
  };

  it("should withhold a denied resource embedded or linked in a tool's result, on both revisions", async () => {
    const result = await agent.callTool({ name: 'fx__leak', arguments: {} });
    expectWithheld(result.content as unknown[]);
    const answer = await stateless('tools/call', { name: 'fx__leak', arguments: {} });
    expectWithheld(answer.result!.content);
  });

  it('should withhold a denied resource from a tool called in code mode', async () => {
    const result = await coder.callTool({
      name: 'tollgate__run_script',
      arguments: { code: 'return await fx.leak({});', timeoutMs: SCRIPT_TIME_MS },
    });
    const text = JSON.stringify(result.content);
    expect(text).toContain(PUBLIC);
    expect(text).toContain('withheld');
    expect(text).not.toContain(SECRET);
  });

  it("should withhold a denied resource embedded in a prompt's messages, on both revisions", async () => {
    const prompt = await agent.getPrompt({ name: 'fx__leaky' });
    expect(JSON.stringify(prompt.messages)).not.toContain(SECRET);
    expect(prompt.messages[1].content).toMatchObject({ type: 'text', text: expect.stringContaining('withheld') });
    expect(prompt.messages[2].content).toMatchObject({ type: 'resource' });
    const answer = await stateless('prompts/get', { name: 'fx__leaky' });
    expect(JSON.stringify(answer)).not.toContain(SECRET);
    expect(answer.result!.messages[1].content.text).toContain('withheld');
  });
});
