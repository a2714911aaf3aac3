/**
 * `npm run bench:crash`: two edges and a worker under steady load of priced calls from several
 * agents (on four keys, one of them with a hard budget that runs out), on a Redis of the bench's
 * own with AOF (appendfsync everysec). Meanwhile an edge is killed with SIGKILL N times (restarted
 * each time; its agents go to the other edge, as behind a load balancer), the worker a few times,
 * and Redis is restarted once from its AOF. Then what agents saw succeed (a callId with a cost in
 * _meta) is compared with the ledger, and each budget counter's spent with the ledger.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Redis } from 'ioredis';
import {
  BenchPlatform,
  benchRedisMode,
  freePort,
  ROOT,
  seedGovernedOrg,
  startBenchPlatform,
} from './support/bench-platform';
import { usageOutboxKeys } from '@tollgate/usage';
import { orgKeyOf, shardOf } from '@tollgate/redis';

const PRICE = 1_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A redis-server of the bench's own (it is restarted): AOF flushed every second, no RDB. */
class OwnRedis {
  private child: ChildProcess | null = null;
  readonly dir = mkdtempSync(path.join(tmpdir(), 'tg-crash-redis-'));

  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--dir',
      this.dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      'everysec',
      '--save',
      '',
      '--logfile',
      path.join(this.dir, 'redis.log'),
    ];
    this.child = spawn('redis-server', args, { stdio: 'ignore' });
    // Ready once it listens and has loaded its AOF (PING answers LOADING before): a fresh try each time.
    while (!(await pingOnce(this.url))) await sleep(50);
  }

  /** SHUTDOWN (the AOF is flushed), then the same server on the same directory. */
  async restart(): Promise<number> {
    const started = performance.now();
    // No reply comes (the server closes the connection), and nothing may resend the command.
    const conn = new Redis(this.url, { retryStrategy: () => null, autoResendUnfulfilledCommands: false });
    conn.on('error', () => undefined);
    const exited = new Promise((resolve) => this.child!.once('exit', resolve));
    void conn.call('SHUTDOWN').catch(() => undefined);
    await exited;
    conn.disconnect();
    await this.start();
    return Math.round(performance.now() - started);
  }

  stop(): void {
    this.child?.kill('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }
}

async function pingOnce(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

interface Seen {
  costMicros: number;
  keyIndex: number;
}

async function main(): Promise<void> {
  const edgeKills = Number(process.env.BENCH_EDGE_KILLS ?? 10);
  const workerKills = Number(process.env.BENCH_WORKER_KILLS ?? 3);
  const agentCount = Number(process.env.BENCH_AGENTS ?? 16);
  const intervalMs = Number(process.env.BENCH_KILL_INTERVAL_MS ?? 2_000);
  // Small, so the capped key runs out early and then probes its hard budget through every fault.
  const capCalls = Number(process.env.BENCH_CAP_CALLS ?? 300);
  // A dead edge's reservations and leases are swept at their deadline; short here so the bench sees it.
  process.env.RESERVATION_TTL_SECONDS ??= '10';
  // Entries a killed worker read and never wrote are taken over after this.
  process.env.LEDGER_CLAIM_IDLE_MS ??= '2000';
  const ttlMs = Number(process.env.RESERVATION_TTL_SECONDS) * 1000;
  const head = process.env.BENCH_HEAD ?? gitHead();
  const loadBefore = loadavg().map((l) => Math.round(l * 100) / 100);

  // BENCH_REDIS=cluster: the platform's own Redis Cluster, where the Redis fault is a master failover.
  const onCluster = benchRedisMode() === 'cluster';
  const redisServer = onCluster ? null : new OwnRedis(await freePort());
  await redisServer?.start();
  const completionWaitReplicas = Number(process.env.REDIS_COMPLETION_WAIT_REPLICAS ?? 0);
  let p: BenchPlatform | undefined;
  let stopping = false;
  const clients = new Set<Client>();
  try {
    p = await startBenchPlatform({ edges: 2, redisUrl: redisServer?.url });
    const org = await seedGovernedOrg(p, PRICE);
    const o = `/v1/orgs/${org.orgId}`;
    // Four keys of one user: key 0 is the seeded one; key 1 has a hard budget that runs out.
    const keys: { id: string; secret: string }[] = [{ id: org.keyId, secret: org.key }];
    for (let i = 1; i < 4; i++) {
      const k = await p.api('POST', `${o}/keys`, { teamId: org.teamId, userId: org.userId, name: `crash-${i}` });
      keys.push({ id: k.key.id, secret: k.secret });
    }
    const budgets: Record<string, { scope: string; scopeId: string; period: string; limitMicros: number }> = {};
    const addBudget = async (name: string, scope: string, scopeId: string, period: string, limitMicros: number) => {
      const b = await p!.api('PUT', `${o}/budgets`, { scope, scopeId, period, limitMicros });
      budgets[b.id] = { scope: name, scopeId, period, limitMicros };
    };
    for (const [i, k] of keys.entries())
      await addBudget(`KEY:${i}`, 'KEY', k.id, 'MONTH', i === 1 ? capCalls * PRICE : 1e12);
    await addBudget('USER', 'USER', org.userId, 'MONTH', 1e12);
    await addBudget('TEAM', 'TEAM', org.teamId, 'DAY', 1e12);
    await addBudget('ORG', 'ORG', org.orgId, 'TOTAL', 1e12);

    const seen = new Map<string, Seen>();
    let seenTwice = 0;
    const outcomes: Record<string, number> = {};
    const count = (what: string) => (outcomes[what] = (outcomes[what] ?? 0) + 1);
    let edgeUp = [true, true];

    const connect = async (edge: number, secret: string): Promise<Client> => {
      const c = new Client({ name: 'crash-agent', version: '1' });
      await c.connect(
        new StreamableHTTPClientTransport(new URL(`${p!.edgeUrls[edge]}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${secret}` } },
        }),
      );
      clients.add(c);
      return c;
    };
    const callOnce = async (c: Client, keyIndex: number): Promise<string | null> => {
      const res = (await c.callTool({ name: 'fixture__ping', arguments: {} })) as CallToolResult;
      if (res.isError) return (res._meta?.['tollgate/error'] as { code?: string } | undefined)?.code ?? 'TOOL_ERROR';
      const meta = res._meta?.['tollgate/call'] as { callId: string; costMicros: number };
      if (seen.has(meta.callId)) seenTwice++;
      seen.set(meta.callId, { costMicros: meta.costMicros, keyIndex });
      return null;
    };
    const agent = async (i: number) => {
      const keyIndex = i % keys.length;
      let edge = i % 2;
      let c: Client | null = null;
      while (!stopping) {
        try {
          if (!edgeUp[edge]) edge = 1 - edge;
          c ??= await connect(edge, keys[keyIndex].secret);
          const refused = await callOnce(c, keyIndex);
          if (refused === null) count('ok');
          else {
            count(refused);
            // A key out of budget keeps knocking, slowly: any call admitted past the limit is overspend.
            await sleep(refused === 'BUDGET_EXCEEDED' ? 20 : 50);
          }
        } catch {
          // The edge died (or Redis is restarting): as behind a load balancer, try the other edge.
          count('transport');
          if (c) {
            clients.delete(c);
            void c.close().catch(() => undefined);
          }
          c = null;
          edge = 1 - edge;
          await sleep(50);
        }
      }
      if (c) await c.close().catch(() => undefined);
    };

    const started = performance.now();
    const agents = Array.from({ length: agentCount }, (_, i) => agent(i));
    const faults: { at: number; what: string; ms: number }[] = [];
    let failover: { killedPort: number; promotedPort: number } | null = null;
    const fault = async (what: string, act: () => Promise<unknown>) => {
      const t = performance.now();
      await act();
      faults.push({ at: Math.round((t - started) / 1000), what, ms: Math.round(performance.now() - t) });
    };
    await sleep(3_000);
    const workerKillAt = new Set(
      Array.from({ length: workerKills }, (_, k) => Math.round(((k + 1) * edgeKills) / (workerKills + 1))),
    );
    const redisRestartAt = Math.ceil(edgeKills / 2);
    for (let k = 1; k <= edgeKills; k++) {
      const e = k % 2;
      await fault(`kill -9 edge ${e}`, async () => {
        edgeUp[e] = false;
        await p!.killEdge(e);
        await p!.restartEdge(e);
        edgeUp = edgeUp.map((u, j) => (j === e ? true : u));
      });
      if (workerKillAt.has(k)) {
        await fault('kill -9 worker', async () => {
          await p!.killWorker();
          await p!.restartWorker();
        });
      }
      if (k === redisRestartAt && redisServer)
        await fault('redis SHUTDOWN + start from AOF', () => redisServer.restart());
      if (k === redisRestartAt && p.cluster) {
        // kill -9 the master that holds the organisation's keys; its replica takes over.
        const [orgKey] = await p.scanKeys(`${p.env.REDIS_PREFIX}:*${org.orgId}*`);
        const port = await p.cluster.masterPortOf(orgKey);
        await fault(`kill -9 redis master :${port} (the org's), replica promoted`, async () => {
          const { promotedPort } = await p!.cluster!.killMasterAndAwaitFailover(port);
          failover = { killedPort: port, promotedPort };
        });
      }
      await sleep(intervalMs);
    }
    await sleep(3_000);
    stopping = true;
    await Promise.all(agents);
    const loadSeconds = (performance.now() - started) / 1000;

    // Dead edges' reservations and leases pass their deadline; one more call per key sweeps them
    // (a sweep runs with the next reservation of the org), as ongoing traffic would.
    await sleep(ttlMs + 1_000);
    for (const [i, k] of keys.entries()) {
      const c = await connect(0, k.secret);
      const refused = await callOnce(c, i);
      count(refused ?? 'ok');
      await c.close();
      clients.delete(c);
    }

    // Everything answered reaches the ledger: wait until the outbox is empty.
    // The organisation's outbox stream (its shard's).
    const stream = usageOutboxKeys(p.env.REDIS_PREFIX, shardOf(org.orgId)).events;
    const drainDeadline = Date.now() + 120_000;
    while ((await p.redis.xlen(stream)) > 0 && Date.now() < drainDeadline) await sleep(200);
    const outboxLeft = await p.redis.xlen(stream);
    await p.stopEdges();

    const ledger = new Map<string, { costMicros: bigint; keyId: string }>();
    for (const r of (
      await p.db.query('SELECT id, "costMicros"::text AS cost, "keyId" FROM "UsageEvent" WHERE "orgId" = $1', [
        org.orgId,
      ])
    ).rows) {
      ledger.set(r.id, { costMicros: BigInt(r.cost), keyId: r.keyId });
    }
    const lost = [...seen.keys()].filter((id) => !ledger.has(id));
    const chargedUnseen = [...ledger.keys()].filter((id) => !seen.has(id)).length;
    const costMismatch = [...seen.entries()].filter(
      ([id, s]) => ledger.has(id) && ledger.get(id)!.costMicros !== BigInt(s.costMicros),
    ).length;

    // Each budget counter's spent against the ledger for its scope and period.
    const drift: Record<string, number> = {};
    const held: Record<string, { reserved: number; leased: number }> = {};
    const scopeColumn: Record<string, string> = { KEY: 'keyId', USER: 'userId', TEAM: 'teamId', ORG: 'orgId' };
    for (const [budgetId, b] of Object.entries(budgets)) {
      const counterKeys = await p.scanKeys(`${orgKeyOf(p.env.REDIS_PREFIX, org.orgId)}:budget:${budgetId}:*`);
      for (const key of counterKeys) {
        const periodStart = new Date(Number(key.split(':').pop()));
        const [spent, reserved, leased] = await p.redis.hmget(key, 'spent', 'reserved', 'leased');
        const column = scopeColumn[b.scope.split(':')[0]];
        const sum = (
          await p.db.query(
            `SELECT COALESCE(sum("costMicros"), 0)::text AS s FROM "UsageEvent" WHERE "orgId" = $1 AND "${column}" = $2 AND "occurredAt" >= $3`,
            [org.orgId, b.scopeId, periodStart],
          )
        ).rows[0].s;
        drift[b.scope] = (drift[b.scope] ?? 0) + Number(BigInt(spent ?? '0') - BigInt(sum));
        held[b.scope] = { reserved: Number(reserved ?? 0), leased: Number(leased ?? 0) };
      }
    }
    const cap = Object.values(budgets).find((b) => b.scope === 'KEY:1')!;
    const capSpent = [...ledger.values()].filter((r) => r.keyId === keys[1].id).reduce((n, r) => n + r.costMicros, 0n);

    const figures = {
      bench: 'crash',
      head,
      edges: 2,
      agents: agentCount,
      edgeKills,
      workerKills,
      redis: benchRedisMode(),
      completionWaitReplicas,
      redisRestarts: redisServer ? 1 : 0,
      masterFailovers: failover ? 1 : 0,
      loadSeconds: Math.round(loadSeconds),
      callsSeen: seen.size,
      ledgerRows: ledger.size,
      lost: lost.length,
      doubled: seenTwice + costMismatch,
      chargedUnseen,
      outboxLeft,
      counterDrift: drift,
      heldAfterStop: held,
      overspend: {
        scope: 'KEY:1',
        limitMicros: cap.limitMicros,
        ledgerSpentMicros: Number(capSpent),
        overMicros: Math.max(0, Number(capSpent) - cap.limitMicros),
        refusedAfterLimit: outcomes.BUDGET_EXCEEDED ?? 0,
      },
      outcomes,
      faults,
      loadAverage: { before: loadBefore, after: loadavg().map((l) => Math.round(l * 100) / 100) },
    };
    console.log(
      `\nCrash bench at ${head}: ${agentCount} agents on 2 edges for ${Math.round(loadSeconds)} s; ${edgeKills} edge kills, ${workerKills} worker kills, ${
        redisServer
          ? '1 Redis restart (AOF)'
          : `1 master failover (kill -9, replica promoted), completion wait for ${completionWaitReplicas} replica(s)`
      }`,
    );
    console.log(
      `  seen ${seen.size} successful calls; ledger ${ledger.size} rows; lost ${lost.length}, doubled ${figures.doubled}, charged but unseen ${chargedUnseen}`,
    );
    console.log(
      `  counter drift (spent - ledger, micro-units): ${JSON.stringify(drift)}; overspend of the hard budget: ${figures.overspend.overMicros}`,
    );
    if (lost.length > 0) console.log(`  lost call ids (first 10): ${lost.slice(0, 10).join(', ')}`);
    console.log(JSON.stringify(figures));
    const exact =
      lost.length === 0 &&
      figures.doubled === 0 &&
      Object.values(drift).every((d) => d === 0) &&
      figures.overspend.overMicros === 0;
    if (!exact) process.exitCode = 1;
  } finally {
    stopping = true;
    await Promise.allSettled([...clients].map((c) => c.close()));
    await p?.close().catch((err: Error) => console.error(`cleanup: ${err.message}`));
    redisServer?.stop();
  }
}

/** The commit the bench runs (`-dirty` when the tree has changes), or `unknown` outside a checkout. */
function gitHead(): string {
  try {
    return execFileSync('git', ['describe', '--always', '--dirty'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return 'unknown';
  }
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exit(1);
});
