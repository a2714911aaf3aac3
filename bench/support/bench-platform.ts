/**
 * Benchmark harness: a fresh database, the apps as separate processes (as in production), and a
 * seeded org whose key goes through every governance step (policy, rate limit, price, budgets at
 * all four levels). Nothing here is mocked.
 */
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { loadWorkerConfig } from '@tollgate/config';
import { createRedisClient, RedisClient, scanTargets } from '@tollgate/redis';
import { ASYNC_CONTEXT_FRAME_FLAG } from '@tollgate/observability';
import { LocalRedisCluster, startLocalRedisCluster } from '../../tools/redis-cluster/local-redis-cluster';
import { DeployedApp, deployedNodeArgs } from './deployed-launch';

export const ROOT = path.resolve(__dirname, '../../..');

/** The deployed app each spawned process kind is (the fixture is not one). */
const DEPLOYED_APPS: Record<string, DeployedApp | undefined> = {
  EDGE: 'mcp-edge',
  WORKER: 'worker',
  ADMIN: 'admin-api',
};

export function adminDatabaseUrl(): string {
  return process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
}

function dbUrl(name: string): string {
  const u = new URL(adminDatabaseUrl());
  u.pathname = `/${name}`;
  return u.toString();
}

async function adminQuery(sql: string): Promise<void> {
  const c = new Client({ connectionString: adminDatabaseUrl() });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** A bench's own database: its URL, and drop() when the bench is done with it. */
export interface BenchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** A fresh database with the migrations as deployed (`prisma migrate deploy`), named `tollgate_<label>_...`. */
export async function createBenchDatabase(label = 'bench'): Promise<BenchDatabase> {
  const name = `tollgate_${label}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const url = dbUrl(name);
  await adminQuery(`CREATE DATABASE "${name}"`);
  const drop = () => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  try {
    await promisify(execFile)(
      process.execPath,
      [path.join(ROOT, 'node_modules/prisma/build/index.js'), 'migrate', 'deploy'],
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: url, PRISMA_HIDE_UPDATE_MESSAGE: '1' } },
    );
  } catch (err) {
    await drop();
    throw err;
  }
  return { name, url, drop };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function firstJsonLine(child: ChildProcess): Promise<any> {
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const line = buf.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line));
    });
    child.once('exit', (code) => reject(new Error(`process exited (${code}) before announcing itself`)));
  });
}

async function waitHealthy(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (hasExited(child)) throw new Error(`${url}: process exited with ${child.exitCode ?? child.signalCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // starting
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} not healthy in 60 s`);
}

export interface BenchPlatform {
  env: Record<string, string>;
  /** Process ids, for CPU accounting: the upstream fixture, the edges, the worker and the admin API. */
  pids: { fixture: number; edges: number[]; worker: number; admin: number };
  adminUrl: string;
  edgeUrls: string[];
  fixtureUrl: string;
  api(method: string, p: string, body?: unknown): Promise<any>;
  /** A client of the bench's Redis (a `Cluster` with BENCH_REDIS=cluster), built as the apps build theirs. */
  redis: RedisClient;
  /** The loopback Redis Cluster the bench started (BENCH_REDIS=cluster), to fail a master over. */
  cluster: LocalRedisCluster | null;
  /** Every key matching a pattern, on every master of a cluster. */
  scanKeys(match: string): Promise<string[]>;
  db: Client;
  /** Stops the edges as an operator would (SIGTERM: they finish, give back their leases and exit). */
  stopEdges(): Promise<void>;
  /** Kills edge i at once (SIGKILL, as a crash) and waits until it is gone. */
  killEdge(i: number): Promise<void>;
  /** Starts edge i again on its port and waits until it is healthy. */
  restartEdge(i: number): Promise<void>;
  /** Kills the worker at once (SIGKILL) and waits until it is gone. */
  killWorker(): Promise<void>;
  /** Starts the worker again and waits until it is healthy. */
  restartWorker(): Promise<void>;
  close(): Promise<void>;
}

/** Which Redis a bench runs on: BENCH_REDIS=cluster starts a 6-node Redis Cluster on loopback. */
export function benchRedisMode(): 'standalone' | 'cluster' {
  return process.env.BENCH_REDIS === 'cluster' ? 'cluster' : 'standalone';
}

/**
 * `edgeEnv[i]`: extra environment for edge i (to compare settings side by side); `redisUrl`: a Redis
 * of the bench's own. With BENCH_REDIS=cluster (and no `redisUrl`) the bench starts a Redis Cluster
 * (3 masters, 3 replicas, AOF everysec) and points every process at it.
 */
export async function startBenchPlatform(opts: {
  edges: number;
  edgeEnv?: Record<string, string>[];
  redisUrl?: string;
}): Promise<BenchPlatform> {
  const cluster =
    !opts.redisUrl && benchRedisMode() === 'cluster' ? await startLocalRedisCluster({ appendOnly: true }) : null;
  const database = await createBenchDatabase();
  const prefix = `tgbench:${randomBytes(4).toString('hex')}`;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATABASE_URL: database.url,
    ...(cluster
      ? { REDIS_CLUSTER_NODES: cluster.seeds }
      : { REDIS_URL: opts.redisUrl ?? process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379' }),
    REDIS_PREFIX: prefix,
    KEY_HASH_SECRET: randomBytes(24).toString('hex'),
    ENCRYPTION_KEYS: `b1:${randomBytes(32).toString('base64')}`,
    ADMIN_BOOTSTRAP_TOKEN: `bench-admin-${randomBytes(16).toString('hex')}`,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    // A bench runs up to a dozen apps on one Postgres (bench:overhead: seven edges, the worker and the
    // admin API); at the default pool of 20 each they outgrew its 100 connections ("too many clients",
    // edges answering 503). An edge reads Postgres only on a cache miss, so 5 each is plenty.
    DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE ?? '5',
    // The bench's upstream fixtures listen on loopback.
    OUTBOUND_ALLOW_CIDRS: process.env.OUTBOUND_ALLOW_CIDRS ?? '127.0.0.0/8,::1/128',
  };
  if (cluster) delete env.REDIS_URL;
  const children: ChildProcess[] = [];
  const spawnNode = (script: string, extra: Record<string, string>) => {
    // Extra node flags per process, e.g. BENCH_EDGE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof".
    const app = script.includes('mcp-edge')
      ? 'EDGE'
      : script.includes('worker')
        ? 'WORKER'
        : script.includes('fixture')
          ? 'FIXTURE'
          : 'ADMIN';
    const flags = process.env[`BENCH_${app}_NODE_ARGS`];
    // The apps run with the flags they are deployed with (docker-compose.yml, the Dockerfile,
    // deploy/k8s: bench/support/deployed-launch.ts); the fixture as a Node service would.
    const deployed = DEPLOYED_APPS[app];
    const nodeArgs = [
      ...(deployed ? deployedNodeArgs(ROOT, deployed) : [ASYNC_CONTEXT_FRAME_FLAG]),
      ...(flags ? flags.split(' ') : []),
    ];
    const child = spawn(process.execPath, [...nodeArgs, path.join(ROOT, 'dist', script)], {
      env: { ...env, ...extra },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    return child;
  };

  // A start-up that fails (a process not healthy in time) must not leave the processes, the
  // database or the cluster it made behind it.
  const abandon = async (err: unknown): Promise<never> => {
    for (const c of children) c.kill('SIGKILL');
    await Promise.all(children.map(exitOf));
    await cluster?.stop();
    await database.drop();
    throw err;
  };

  const fixture = spawnNode('bench/support/fixture-server.main.js', {});
  const fixtureUrl = ((await firstJsonLine(fixture).catch(abandon)) as { url: string }).url;

  const workerPort = await freePort();
  let worker = spawnNode('apps/worker/src/main.js', { WORKER_PORT: String(workerPort) });
  const adminPort = await freePort();
  const admin = spawnNode('apps/admin-api/src/main.js', { ADMIN_PORT: String(adminPort) });
  const edgeUrls: string[] = [];
  const edges: ChildProcess[] = [];
  const edgePorts: number[] = [];
  const spawnEdge = (i: number) =>
    spawnNode('apps/mcp-edge/src/main.js', { ...opts.edgeEnv?.[i], EDGE_PORT: String(edgePorts[i]) });
  for (let i = 0; i < opts.edges; i++) {
    edgePorts.push(await freePort());
    edges.push(spawnEdge(i));
    edgeUrls.push(`http://127.0.0.1:${edgePorts[i]}`);
  }
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  try {
    await waitHealthy(`http://127.0.0.1:${workerPort}/healthz`, worker);
    await waitHealthy(`${adminUrl}/healthz`, admin);
    for (const [i, url] of edgeUrls.entries()) await waitHealthy(`${url}/healthz`, edges[i]);
  } catch (err) {
    await abandon(err);
  }

  const api = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${adminUrl}${p}`, {
      method,
      headers: {
        Authorization: `Bearer ${env.ADMIN_BOOTSTRAP_TOKEN}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  const redis = createRedisClient(loadWorkerConfig(env).redis);
  const scanKeys = async (match: string) => {
    const found: string[] = [];
    for (const node of await scanTargets(redis)) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000);
        cursor = next;
        found.push(...keys);
      } while (cursor !== '0');
    }
    return found;
  };
  const db = new Client({ connectionString: env.DATABASE_URL });
  await db.connect();

  const pids = { fixture: fixture.pid!, edges: edges.map((e) => e.pid!), worker: worker.pid!, admin: admin.pid! };
  const kill = async (child: ChildProcess) => {
    child.kill('SIGKILL');
    await exitOf(child);
  };
  return {
    env,
    pids,
    adminUrl,
    edgeUrls,
    fixtureUrl,
    api,
    redis,
    cluster,
    scanKeys,
    db,
    async stopEdges() {
      for (const e of edges) e.kill('SIGTERM');
      await Promise.all(edges.map(exitOf));
    },
    killEdge: (i) => kill(edges[i]),
    async restartEdge(i) {
      edges[i] = spawnEdge(i);
      pids.edges[i] = edges[i].pid!;
      await waitHealthy(`${edgeUrls[i]}/healthz`, edges[i]);
    },
    killWorker: () => kill(worker),
    async restartWorker() {
      worker = spawnNode('apps/worker/src/main.js', { WORKER_PORT: String(workerPort) });
      pids.worker = worker.pid!;
      await waitHealthy(`http://127.0.0.1:${workerPort}/healthz`, worker);
    },
    async close() {
      for (const c of children) c.kill('SIGTERM');
      await Promise.all(children.map(exitOf));
      await db.end();
      if (!cluster) await Promise.all((await scanKeys(`${prefix}:*`)).map((k) => redis.unlink(k)));
      redis.disconnect();
      await cluster?.stop();
      // BENCH_KEEP_DATABASE=1 leaves the seeded database for a look at its plans afterwards (drop it by hand).
      if (process.env.BENCH_KEEP_DATABASE === '1') console.error(`bench database kept: ${database.url}`);
      else await database.drop();
    },
  };
}

/**
 * Whether the child has exited. One that died of a signal has no exit code but a signal code (Nest
 * re-raises SIGTERM after its shutdown hooks), and its 'exit' event has already fired.
 */
function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Resolves once the child has exited (at once if it already has: its 'exit' event will not fire again). */
function exitOf(child: ChildProcess): Promise<unknown> | undefined {
  return hasExited(child) ? undefined : new Promise((resolve) => child.once('exit', resolve));
}

export interface SeededOrg {
  orgId: string;
  teamId: string;
  userId: string;
  keyId: string;
  key: string;
  upstreamId: string;
}

/** An org with one key and the fixture upstream, synced, allowed and priced. */
export async function seedGovernedOrg(p: BenchPlatform, pricePerCallMicros: number): Promise<SeededOrg> {
  const org = await p.api('POST', '/v1/orgs', { name: 'Bench', slug: `bench-${randomBytes(3).toString('hex')}` });
  const o = `/v1/orgs/${org.id}`;
  const team = await p.api('POST', `${o}/teams`, { name: 'bench' });
  const user = await p.api('POST', `${o}/users`, { email: 'bench@example.test' });
  await p.api('POST', `${o}/teams/${team.id}/members`, { userId: user.id });
  const key = await p.api('POST', `${o}/keys`, { teamId: team.id, userId: user.id, name: 'bench' });
  const upstream = await p.api('POST', `${o}/upstreams`, {
    namespace: 'fixture',
    transport: 'STREAMABLE_HTTP',
    url: p.fixtureUrl,
  });
  await p.api('POST', `${o}/upstreams/${upstream.id}/sync`);
  const deadline = Date.now() + 30_000;
  while ((await p.api('GET', `${o}/upstreams/${upstream.id}/tools`)).length === 0) {
    if (Date.now() > deadline) throw new Error('fixture sync did not finish');
    await new Promise((r) => setTimeout(r, 100));
  }
  await p.api('PUT', `${o}/policies/ORG/${org.id}`, { allow: ['fixture:*'], deny: ['fixture:fail'] });
  await p.api('PUT', `${o}/policies/KEY/${key.key.id}`, { allow: ['fixture:ping', 'fixture:slow'], deny: [] });
  await p.api('POST', `${o}/prices`, { upstreamId: upstream.id, toolPattern: '*', perCallMicros: pricePerCallMicros });
  return {
    orgId: org.id,
    teamId: team.id,
    userId: user.id,
    keyId: key.key.id,
    key: key.secret,
    upstreamId: upstream.id,
  };
}

/** CPU time (user + system) a process has used so far, in milliseconds (Linux /proc). */
export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which sits in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** CPU time the whole machine has spent busy (every process, every core), in milliseconds (Linux /proc). */
export function machineBusyCpuMs(): number {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
    .split('\n', 1)[0]
    .trim()
    .split(/\s+/)
    .map(Number);
  return ((user + nice + system + irq + softirq + steal) * 1000) / CLOCK_TICKS_PER_SECOND;
}

// sysconf(_SC_CLK_TCK): 100 on every Linux platform Node runs on.
const CLOCK_TICKS_PER_SECOND = 100;
