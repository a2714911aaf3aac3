import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/oauth-test-client';
import { RunningPlatform, startPlatform } from '../support/platform';

/**
 * A real mcp-remote (0.15, from devDependencies) configured with a `tg_` key the edge refuses, on a
 * deployment whose OAuth authorization server is on. What the edge answers is ours to decide;
 * what mcp-remote does with it is not, and this pins both (docs/security.md, "A refused virtual
 * key at the edge").
 */
describe('mcp-remote with a refused tg_ key', () => {
  let p: RunningPlatform;
  let edgeUrl: string;
  let orgId: string;
  let revokedKey: string;

  beforeAll(async () => {
    const [adminPort, edgePort] = [await freePort(), await freePort()];
    edgeUrl = `http://127.0.0.1:${edgePort}`;
    p = await startPlatform({
      ADMIN_PORT: String(adminPort),
      EDGE_PORT: String(edgePort),
      ADMIN_PUBLIC_URL: `http://127.0.0.1:${adminPort}`,
      EDGE_PUBLIC_URL: edgeUrl,
    });
    orgId = (await p.admin('POST', '/v1/orgs', { name: 'Remote', slug: 'remote' })).body.id;
    const teamId = (await p.admin('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await p.admin('POST', `/v1/orgs/${orgId}/users`, { email: 'rita@remote.test' })).body.id;
    await p.admin('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    const key = (await p.admin('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'laptop' })).body;
    await p.admin('POST', `/v1/orgs/${orgId}/keys/${key.key.id}/revoke`);
    revokedKey = key.secret;
  });

  afterAll(async () => {
    await p?.close();
  });

  it('should answer its probe 401 invalid_token naming the key as revoked, with nothing pointing at OAuth; mcp-remote still asks for a browser sign-in, and no key comes of it', async () => {
    // The probe mcp-remote sends first (a GET of the endpoint with its configured headers).
    const probe = await fetch(`${edgeUrl}/mcp`, {
      headers: { Authorization: `Bearer ${revokedKey}`, Accept: 'application/json, text/event-stream' },
    });
    expect(probe.status).toBe(401);
    const challenge = probe.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/error="invalid_token"/);
    expect(challenge).toMatch(/virtual key is unknown or revoked/);
    expect(challenge).not.toMatch(/resource_metadata|scope=/);

    const configDir = await mkdtemp(path.join(tmpdir(), 'mcp-remote-'));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        require.resolve('mcp-remote/dist/proxy.js'),
        `${edgeUrl}/mcp`,
        String(await freePort()),
        '--header',
        `Authorization: Bearer ${revokedKey}`,
      ],
      // BROWSER=true: the "browser" mcp-remote opens is a no-op; nobody signs in.
      env: { PATH: process.env.PATH ?? '', HOME: configDir, MCP_REMOTE_CONFIG_DIR: configDir, BROWSER: 'true' },
      stderr: 'pipe',
    });
    let stderr = '';
    const askedToSignIn = new Promise<URL>((resolve) => {
      transport.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const m = /Please authorize this client by visiting:\s+(\S+)/.exec(stderr);
        if (m) resolve(new URL(m[1]));
      });
    });
    const client = new Client({ name: 'via-mcp-remote', version: '1.0.0' });
    try {
      const connecting = client.connect(transport).catch((err: Error) => err);
      // mcp-remote 0.15 reads the well-known metadata on any 401 and starts a sign-in, whatever the
      // challenge says: Tollgate's authorization server, for the edge's resource.
      const signIn = await askedToSignIn;
      expect(signIn.origin).toBe(new URL(p.adminUrl).origin);
      expect(signIn.pathname).toBe('/oauth/authorize');
      expect(signIn.searchParams.get('resource')).toBe(`${edgeUrl}/mcp`);
      await client.close();
      await connecting;
      // Nobody signed in: no key was made for it (a key is made only when a code is redeemed).
      const keys = (await p.admin('GET', `/v1/orgs/${orgId}/keys`)).body as { kind: string }[];
      expect(keys.filter((k) => k.kind === 'OAUTH')).toEqual([]);
    } catch (err) {
      throw new Error(`${(err as Error).message}\nmcp-remote said: ${stderr.slice(-1500)}`);
    } finally {
      await client.close();
      await rm(configDir, { recursive: true, force: true });
    }
  });
});
