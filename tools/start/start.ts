/**
 * `npm start`: runs the whole platform locally (edge, admin API and worker as three processes, as
 * in production) with demo data, on an embedded Postgres (or DATABASE_URL) and a local Redis.
 */
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { ASYNC_CONTEXT_FRAME_FLAG } from '@tollgate/observability';
import { seedDemo } from './demo-seed';
import { startLocalRedisCluster } from '../redis-cluster/local-redis-cluster';
import { ensurePostgres, ensureRedis, LocalService } from './local-infra';

const ROOT = path.resolve(__dirname, '../../..');
const DATA_DIR = path.join(ROOT, '.tollgate');

interface LocalSecrets {
  KEY_HASH_SECRET: string;
  ENCRYPTION_KEYS: string;
  ADMIN_BOOTSTRAP_TOKEN: string;
}

/** Secrets generated on the first run and kept under .tollgate/, so keys survive restarts. */
async function localSecrets(): Promise<LocalSecrets> {
  const file = path.join(DATA_DIR, 'secrets.json');
  if (existsSync(file)) return JSON.parse(await readFile(file, 'utf8')) as LocalSecrets;
  const secrets: LocalSecrets = {
    KEY_HASH_SECRET: randomBytes(32).toString('hex'),
    ENCRYPTION_KEYS: `local1:${randomBytes(32).toString('base64')}`,
    ADMIN_BOOTSTRAP_TOKEN: `tga_local_${randomBytes(24).toString('hex')}`,
  };
  await writeFile(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}

/**
 * The Redis the platform runs on: a cluster or Sentinel named in the environment as it is;
 * `TOLLGATE_REDIS=cluster`, a 6-node Redis Cluster on loopback started here (stopped on exit);
 * otherwise REDIS_URL, started locally if nothing answers there.
 */
async function localRedis(services: LocalService[], log: (m: string) => void): Promise<Record<string, string>> {
  const env = process.env;
  if (env.REDIS_CLUSTER_NODES) return { REDIS_CLUSTER_NODES: env.REDIS_CLUSTER_NODES };
  if (env.REDIS_SENTINELS || /^rediss?\+sentinel:/.test(env.REDIS_URL ?? '')) return {};
  if (env.TOLLGATE_REDIS === 'cluster') {
    log('starting a 6-node Redis Cluster on loopback (TOLLGATE_REDIS=cluster)');
    const cluster = await startLocalRedisCluster({ appendOnly: true, log });
    services.push({ url: cluster.seeds, stop: () => cluster.stop() });
    log(`Redis Cluster ready: REDIS_CLUSTER_NODES=${cluster.seeds}`);
    return { REDIS_CLUSTER_NODES: cluster.seeds };
  }
  const redis = await ensureRedis({
    url: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    dataDir: path.join(DATA_DIR, 'redis'),
    log,
  });
  services.push(redis);
  return { REDIS_URL: redis.url };
}

function prefixLines(name: string, stream: NodeJS.ReadableStream, out: NodeJS.WritableStream): void {
  let buffered = '';
  stream.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) out.write(`[${name}] ${line}\n`);
  });
}

function startApp(name: string, env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(
    process.execPath,
    ['--enable-source-maps', ASYNC_CONTEXT_FRAME_FLAG, path.join(ROOT, 'dist/apps', name, 'src/main.js')],
    {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  prefixLines(name, child.stdout!, process.stdout);
  prefixLines(name, child.stderr!, process.stderr);
  return child;
}

/** Polls a health URL while the process starts (a process boot has no event to await from outside). */
async function waitHealthy(name: string, url: string, child: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited with code ${child.exitCode} during start-up`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${name} did not become healthy at ${url} within ${timeoutMs / 1000} s`);
}

async function main(): Promise<void> {
  await mkdir(DATA_DIR, { recursive: true });
  const log = (m: string) => console.log(`[start] ${m}`);
  const services: LocalService[] = [];
  const children: ChildProcess[] = [];

  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : undefined)));
    for (const s of services.reverse()) await s.stop().catch(() => undefined);
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  try {
    let databaseUrl = process.env.DATABASE_URL;
    if (!databaseUrl) {
      const pg = await ensurePostgres({
        dataDir: path.join(DATA_DIR, 'pg'),
        port: Number(process.env.TOLLGATE_PG_PORT ?? 54329),
        log,
      });
      services.push(pg);
      databaseUrl = pg.url;
    }
    const redisVars = await localRedis(services, log);

    log('applying database migrations');
    await promisify(execFile)(
      process.execPath,
      [path.join(ROOT, 'node_modules/prisma/build/index.js'), 'migrate', 'deploy'],
      {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: databaseUrl, PRISMA_HIDE_UPDATE_MESSAGE: '1' },
      },
    );

    const secrets = await localSecrets();
    const host = process.env.HOST ?? '127.0.0.1';
    const ports = {
      edge: Number(process.env.EDGE_PORT ?? 4000),
      admin: Number(process.env.ADMIN_PORT ?? 4001),
      worker: Number(process.env.WORKER_PORT ?? 4002),
    };
    const edgeUrl = `http://${host}:${ports.edge}`;
    const adminUrl = `http://${host}:${ports.admin}`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...secrets,
      ...pick(process.env, ['KEY_HASH_SECRET', 'ENCRYPTION_KEYS', 'ADMIN_BOOTSTRAP_TOKEN']),
      DATABASE_URL: databaseUrl,
      ...redisVars,
      HOST: host,
      // Before the banner the apps would print a few hundred lines (module wiring, every route,
      // each seeding request); warnings and errors only, unless LOG_LEVEL says otherwise.
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      EDGE_PORT: String(ports.edge),
      ADMIN_PORT: String(ports.admin),
      WORKER_PORT: String(ports.worker),
      ADMIN_PUBLIC_URL: process.env.ADMIN_PUBLIC_URL ?? adminUrl,
      // With both public URLs the admin API serves OAuth for MCP clients (docs/oauth.md).
      EDGE_PUBLIC_URL: process.env.EDGE_PUBLIC_URL ?? edgeUrl,
      // The apps' output goes through a pipe (prefixed below): coloured text for a person at a
      // terminal, JSON lines when this output is itself collected.
      LOG_FORMAT: process.env.LOG_FORMAT ?? (process.stdout.isTTY ? 'text' : 'json'),
    };
    // On a cluster REDIS_URL must stay unset (config refuses both).
    if (redisVars.REDIS_CLUSTER_NODES) delete env.REDIS_URL;

    const apps = [
      { name: 'worker', url: `http://${host}:${ports.worker}/healthz` },
      { name: 'admin-api', url: `${adminUrl}/healthz` },
      { name: 'mcp-edge', url: `${edgeUrl}/healthz` },
    ];
    for (const app of apps) {
      const child = startApp(app.name, env);
      children.push(child);
      child.once('exit', (code) => {
        if (!stopping) {
          console.error(`[start] ${app.name} exited (code ${code}); stopping the platform`);
          void stop(1);
        }
      });
    }
    for (const [i, app] of apps.entries()) await waitHealthy(app.name, app.url, children[i]);

    const adminToken = env.ADMIN_BOOTSTRAP_TOKEN!;
    const demo = await seedDemo({ adminUrl, edgeUrl, adminToken, dataDir: DATA_DIR, log });
    const signIn = await demoSignInCode(adminUrl, adminToken);
    const consoleUrl = `${adminUrl}/console/`;
    const summary = { edgeUrl, adminUrl, consoleUrl, adminToken, demoKey: demo.demoKey, oauthSignIn: signIn };
    await writeFile(path.join(DATA_DIR, 'demo.json'), JSON.stringify(summary, null, 2), { mode: 0o600 });

    console.log(
      [
        '',
        'Tollgate is running.',
        `  MCP edge:    ${edgeUrl}/mcp`,
        `  Admin API:   ${adminUrl}/v1/orgs   (Authorization: Bearer <admin token>; every route: ${adminUrl}/docs)`,
        `  Console:     ${consoleUrl}   (sign in with the admin token below)`,
        `  Admin token: ${adminToken}`,
        `  Demo key:    ${demo.demoKey}   (budget ${demo.budgetDescription})`,
        `  OAuth:       connect any MCP client to ${edgeUrl}/mcp without a key (Claude, VS Code,`,
        `               npx mcp-remote ${edgeUrl}/mcp); sign in as ${signIn.email}`,
        `               with the code ${signIn.code} (valid 7 days). See docs/oauth.md`,
        `               A client connected this way is a key of its own with no budget (the demo key's is`,
        `               per key): give it one with PUT ${adminUrl}/v1/orgs/<org>/budgets (docs/admin-api.md).`,
        `  Saved to .tollgate/demo.json. Try: npm run demo:agent`,
        `  Logs:        warnings and errors only; LOG_LEVEL=log npm start shows each request, LOG_LEVEL=debug everything.`,
        '  Press Ctrl+C to stop.',
        '',
      ].join('\n'),
    );
  } catch (err) {
    console.error(`[start] ${(err as Error).message}`);
    await stop(1);
  }
}

/** A fresh sign-in code for the demo user, for the OAuth sign-in page (replaces the previous one). */
async function demoSignInCode(adminUrl: string, adminToken: string): Promise<{ email: string; code: string }> {
  const get = async (p: string, init: RequestInit = {}) => {
    const res = await fetch(`${adminUrl}${p}`, {
      ...init,
      headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' },
    });
    if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${p} -> ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  const org = ((await get('/v1/orgs')) as { id: string; slug: string }[]).find((o) => o.slug === 'demo')!;
  const user = ((await get(`/v1/orgs/${org.id}/users`)) as { id: string; email: string }[]).find(
    (u) => u.email === 'demo@tollgate.local',
  )!;
  const issued = await get(`/v1/orgs/${org.id}/users/${user.id}/sign-in-codes`, {
    method: 'POST',
    body: JSON.stringify({ ttlSeconds: 7 * 86_400 }),
  });
  return { email: user.email, code: issued.code };
}

function pick(env: NodeJS.ProcessEnv, names: string[]): Record<string, string> {
  return Object.fromEntries(names.filter((n) => env[n]).map((n) => [n, env[n]!]));
}

void main();
