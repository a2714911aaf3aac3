/**
 * Seeds the demo organisation through the admin API (the same path an admin takes), idempotently:
 * a second `npm start` finds what is there and only adds what is missing.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { formatMicros } from '@tollgate/kernel';

// The repository's root: above tools/start, whether run compiled (dist/tools/start) or from source.
const ROOT = repoRoot(__dirname);

function repoRoot(from: string): string {
  for (let dir = from; dir !== path.dirname(dir); dir = path.dirname(dir))
    if (existsSync(path.join(dir, 'package.json'))) return dir;
  throw new Error(`no package.json above ${from}`);
}

export const DEMO_PRICES = [
  { namespace: 'everything', toolPattern: 'echo', perCallMicros: 10_000 },
  { namespace: 'everything', toolPattern: 'get-sum', perCallMicros: 5_000 },
  { namespace: 'everything', toolPattern: '*', perCallMicros: 1_000 },
  // Every memory tool but read_graph (all the others end in "s"): read_graph is the demo's free
  // tool, priced by no rule, which a key with a budget calls like any other (demo:agent does).
  { namespace: 'memory', toolPattern: '*s', perCallMicros: 2_000 },
  // Reads and gets are priced by rules of their own kind; `*` above prices tools only.
  { namespace: 'everything', toolPattern: 'resource:*', perCallMicros: 500 },
];
export const DEMO_KEY_BUDGET_MICROS = 100_000;
/** The demo's unpriced tool (see DEMO_PRICES). */
export const DEMO_FREE_TOOL = 'memory__read_graph';

interface SeedOptions {
  adminUrl: string;
  edgeUrl: string;
  adminToken: string;
  dataDir: string;
  log: (m: string) => void;
}

type Json = any;

export async function seedDemo(opts: SeedOptions): Promise<{ demoKey: string; budgetDescription: string }> {
  const api = async (method: string, p: string, body?: unknown): Promise<Json> => {
    const res = await fetch(`${opts.adminUrl}${p}`, {
      method,
      headers: {
        Authorization: `Bearer ${opts.adminToken}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${p} -> ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };

  const orgs: Json[] = await api('GET', '/v1/orgs');
  const org =
    orgs.find((o) => o.slug === 'demo') ??
    (await api('POST', '/v1/orgs', { name: 'Demo Org', slug: 'demo', timeZone: 'UTC' }));
  const o = `/v1/orgs/${org.id}`;
  const teams: Json[] = await api('GET', `${o}/teams`);
  const team = teams.find((t) => t.name === 'demo-team') ?? (await api('POST', `${o}/teams`, { name: 'demo-team' }));
  const users: Json[] = await api('GET', `${o}/users`);
  const user =
    users.find((u) => u.email === 'demo@tollgate.local') ??
    (await api('POST', `${o}/users`, { email: 'demo@tollgate.local', name: 'Demo User' }));
  await api('POST', `${o}/teams/${team.id}/members`, { userId: user.id });

  const upstreams: Json[] = await api('GET', `${o}/upstreams`);
  const wanted = [
    {
      namespace: 'everything',
      displayName: 'MCP reference server "everything"',
      transport: 'STDIO',
      command: process.execPath,
      args: [path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
    },
    {
      namespace: 'memory',
      displayName: 'MCP reference knowledge-graph memory',
      transport: 'STDIO',
      command: process.execPath,
      args: [path.join(ROOT, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js')],
    },
  ];
  const byNamespace: Record<string, Json> = {};
  for (const w of wanted) {
    byNamespace[w.namespace] =
      upstreams.find((u) => u.namespace === w.namespace) ?? (await api('POST', `${o}/upstreams`, w));
  }

  // The agent sees its upstreams' resources and prompts too (their own lists: default deny otherwise).
  await api('PUT', `${o}/policies/ORG/${org.id}`, {
    allow: ['everything:*', 'memory:*'],
    deny: ['everything:get-env'],
    resourceAllow: ['everything:*', 'memory:*'],
    promptAllow: ['everything:*', 'memory:*'],
  });

  const prices: Json[] = await api('GET', `${o}/prices`);
  for (const p of DEMO_PRICES) {
    const upstreamId = byNamespace[p.namespace].id;
    if (!prices.some((r) => r.upstreamId === upstreamId && r.toolPattern === p.toolPattern)) {
      await api('POST', `${o}/prices`, { upstreamId, toolPattern: p.toolPattern, perCallMicros: p.perCallMicros });
    }
  }

  // Before read_graph was free, memory's rule was "*": end it, so an existing .tollgate has the free tool too.
  for (const r of prices)
    if (r.upstreamId === byNamespace.memory.id && r.toolPattern === '*' && !r.effectiveUntil)
      await api('POST', `${o}/prices/${r.id}/end`, {});

  opts.log('syncing the demo upstreams');
  for (const u of Object.values(byNamespace)) await api('POST', `${o}/upstreams/${u.id}/sync`);
  await waitForTools(
    api,
    o,
    Object.values(byNamespace).map((u) => u.id),
  );

  const demoKey = await reuseOrCreateKey(opts, api, o, team.id, user.id);
  const keyId = (await api('GET', `${o}/keys`)).find((k: Json) => demoKey.startsWith(k.prefix) && !k.revokedAt)?.id;
  await api('PUT', `${o}/budgets`, {
    scope: 'KEY',
    scopeId: keyId,
    period: 'MONTH',
    limitMicros: DEMO_KEY_BUDGET_MICROS,
    mode: 'HARD',
  });
  return { demoKey, budgetDescription: `${formatMicros(BigInt(DEMO_KEY_BUDGET_MICROS))} per month` };
}

/**
 * Issues a fresh demo key on every start (so the demo budget starts full) and revokes the key of
 * the previous run, found by its prefix in .tollgate/demo.json.
 */
async function reuseOrCreateKey(
  opts: SeedOptions,
  api: (m: string, p: string, b?: unknown) => Promise<Json>,
  o: string,
  teamId: string,
  userId: string,
): Promise<string> {
  const file = path.join(opts.dataDir, 'demo.json');
  if (existsSync(file)) {
    const previous = JSON.parse(await readFile(file, 'utf8')) as { demoKey?: string };
    const keys: Json[] = await api('GET', `${o}/keys`);
    const old = previous.demoKey ? keys.find((k) => previous.demoKey!.startsWith(k.prefix) && !k.revokedAt) : undefined;
    if (old) await api('POST', `${o}/keys/${old.id}/revoke`);
  }
  const created = await api('POST', `${o}/keys`, { teamId, userId, name: 'demo-agent' });
  return created.secret as string;
}

/** Sync runs in the worker; the tools appear when it is done (bounded wait, start-up only). */
async function waitForTools(
  api: (m: string, p: string) => Promise<Json>,
  o: string,
  upstreamIds: string[],
): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (const id of upstreamIds) {
    for (;;) {
      const tools: Json[] = await api('GET', `${o}/upstreams/${id}/tools`);
      if (tools.length > 0) break;
      const up = await api('GET', `${o}/upstreams/${id}`);
      if (up.lastSyncError) throw new Error(`sync of ${up.namespace} failed: ${up.lastSyncError}`);
      if (Date.now() > deadline) throw new Error(`sync of upstream ${id} did not finish in 60 s`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
