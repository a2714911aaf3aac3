/**
 * `npm run bench:edge-ab`: edges of different builds or node flags side by side, behind one
 * platform (Postgres, Redis, worker, admin API, the bench's fixture upstream) and one organisation
 * with a budget and a rate limit at every level, in alternating c64 rounds; prints each edge's CPU
 * per call (from /proc) and its ratio to the first. Two identical variants give the run's noise.
 * Where bench:overhead compares a build with direct calls, this compares builds (or flags) with
 * each other under the same load, so a regression can be bisected and profiled:
 *
 *   EDGE_AB_VARIANTS='[{"label":"main"},{"label":"main, no flag","nodeArgs":[]},
 *     {"label":"before","dist":"/path/to/other/worktree/dist"}]' npm run bench:edge-ab
 *
 * `dist`: the build's dist directory (this one's by default; another worktree's works if its
 * database schema reads this one's, and builds before the Redis shards read the one epoch key set
 * below). `nodeArgs`: node flags (default: the launchers' own, ASYNC_CONTEXT_FRAME_FLAG; add
 * `--cpu-prof --cpu-prof-dir=DIR` to profile). `env`: extra environment for that edge.
 * `telemetry: true`: traces and metrics on, exported to an OTLP receiver in this process (as in
 * bench:overhead), e.g. `{"label":"1 in 100","telemetry":true,"env":{"OTEL_TRACES_SAMPLER":
 * "parentbased_traceidratio","OTEL_TRACES_SAMPLER_ARG":"0.01"}}` beside `{"label":"off"}`.
 */
import { ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { ASYNC_CONTEXT_FRAME_FLAG } from '@tollgate/observability';
import { ROOT, freePort, processCpuMs, seedGovernedOrg, startBenchPlatform } from './support/bench-platform';
import { otlpEnv, startOtlpSink } from './support/otlp-sink';

interface Variant {
  label: string;
  dist?: string;
  nodeArgs?: string[];
  env?: Record<string, string>;
  telemetry?: boolean;
}

// Idle connections are dropped after 4 s, before the edge's server closes them (5 s): a connection
// reused just as the server closed it failed a run now and then with "socket hang up".
const agent = new http.Agent({ keepAlive: true, maxSockets: 256, timeout: 4000 });
const BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'fixture__ping', arguments: {} },
});

function callOnce(url: URL, key: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: '/mcp',
        method: 'POST',
        agent,
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          Authorization: `Bearer ${key}`,
          'Content-Length': Buffer.byteLength(BODY),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () =>
          res.statusCode !== 200 || text.includes('"isError":true')
            ? reject(new Error(`bad answer ${res.statusCode}: ${text.slice(0, 300)}`))
            : resolve(),
        );
      },
    );
    req.on('error', reject);
    req.end(BODY);
  });
}

async function run(url: URL, key: string, concurrency: number, total: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        await callOnce(url, key);
      }
    }),
  );
}

async function waitHealthy(url: string): Promise<void> {
  // Three minutes: edges started side by side with profiling on a loaded 2-core machine take long.
  for (let i = 0; i < 1800; i++) {
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} not healthy within 180 s`);
}

async function main(): Promise<void> {
  const variants = JSON.parse(process.env.EDGE_AB_VARIANTS ?? '[{"label":"this build"}]') as Variant[];
  const rounds = Number(process.env.BENCH_ROUNDS ?? 8);
  const perRound = Number(process.env.BENCH_CALLS_PER_ROUND ?? 2500);
  const otlp = await startOtlpSink();
  const p = await startBenchPlatform({ edges: 0 });
  const children: ChildProcess[] = [];
  try {
    const org = await seedGovernedOrg(p, 1);
    const ids = { ORG: org.orgId, TEAM: org.teamId, USER: org.userId, KEY: org.keyId };
    for (const [scope, scopeId] of Object.entries(ids)) {
      await p.api('PUT', `/v1/orgs/${org.orgId}/budgets`, {
        scope,
        scopeId,
        period: 'MONTH',
        limitMicros: 1_000_000_000_000,
      });
      await p.api('POST', `/v1/orgs/${org.orgId}/rate-limits`, {
        scope,
        scopeId,
        toolPattern: 'fixture:*',
        callsPerWindow: 1_000_000,
        windowSeconds: 60,
        maxConcurrent: 10_000,
      });
    }
    // Builds before the Redis shards (#22) read one epoch key for the deployment; the worker sets one per shard.
    await p.redis.set(`${p.env.REDIS_PREFIX}:epoch`, 'edge-ab');
    const edges: (Variant & { url: URL; pid: number; cpuMs: number })[] = [];
    for (const v of variants) {
      const port = await freePort();
      const main = path.join(v.dist ?? path.join(ROOT, 'dist'), 'apps/mcp-edge/src/main.js');
      const child = spawn(process.execPath, [...(v.nodeArgs ?? [ASYNC_CONTEXT_FRAME_FLAG]), main], {
        env: { ...p.env, ...(v.telemetry ? otlpEnv(otlp.url) : {}), ...v.env, EDGE_PORT: String(port) },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      children.push(child);
      edges.push({ ...v, url: new URL(`http://127.0.0.1:${port}`), pid: child.pid!, cpuMs: 0 });
    }
    for (const e of edges) await waitHealthy(`${e.url.origin}/healthz`);
    // Warm up (JIT, pools, caches, leases), then alternate: each edge goes first equally often.
    for (const e of edges) {
      await run(e.url, org.key, 1, 300);
      await run(e.url, org.key, 64, 4000);
    }
    for (let r = 0; r < rounds; r++) {
      for (const e of edges.map((_, i) => edges[(i + r) % edges.length])) {
        const before = processCpuMs(e.pid);
        await run(e.url, org.key, 64, perRound);
        e.cpuMs += processCpuMs(e.pid) - before;
      }
    }
    const calls = rounds * perRound;
    const base = edges[0].cpuMs / calls;
    console.log(`\nEdge CPU per call at c64, ${rounds} rounds of ${perRound} calls each, alternating:`);
    for (const e of edges) {
      const perCall = e.cpuMs / calls;
      console.log(`  ${e.label.padEnd(36)} ${perCall.toFixed(4)} ms  x${(perCall / base).toFixed(3)}`);
    }
    console.log(
      JSON.stringify({
        bench: 'edge-ab',
        calls,
        edges: edges.map((e) => ({ label: e.label, cpuMsPerCall: e.cpuMs / calls })),
      }),
    );
  } finally {
    agent.destroy();
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))));
    await p.close();
    otlp.close();
  }
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exit(1);
});
