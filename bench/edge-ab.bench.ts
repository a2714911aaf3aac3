/**
 * `npm run bench:edge-ab`: edges of different builds or node flags side by side, behind one
 * platform (Postgres, Redis, worker, admin API, the bench's fixture upstream), each edge serving its
 * own organisation with a budget and a rate limit at every level. Each variant runs as EDGE_AB_COPIES
 * edges (2 by default). In each of BENCH_ROUNDS rounds (16) the edges serve BENCH_CALLS_PER_ROUND
 * calls each (1500) at BENCH_CONCURRENCY (64), one after another in an order that rotates; each
 * edge's CPU per call is its threads' CPU time (/proc) over its calls. Against the first variant,
 * per round, the mean of a variant's edges over the mean of the first's; the median over the rounds
 * is printed with its spread, beside the noise: the first variant's two copies against each other,
 * the same way (bench/support/edge-rounds.ts). BENCH_MODE=concurrent has all the edges serve at
 * once for BENCH_ROUND_SECONDS (4) in each round instead (on a loaded 2-core machine each then gets
 * scraps of a core, and identical edges measured further apart: docs/operations.md); `both` runs one
 * mode, then the other.
 * Where bench:overhead compares a build with direct calls, this compares builds (or flags) with
 * each other under the same load, so a regression can be bisected and profiled:
 *
 *   EDGE_AB_VARIANTS='[{"label":"main"},{"label":"main, no flag","nodeArgs":[]},
 *     {"label":"before","dist":"/path/to/other/worktree/dist"}]' npm run bench:edge-ab
 *
 * `dist`: the build's dist directory (this one's by default; another worktree's works if its
 * database schema reads this one's, and builds before the Redis shards read the one epoch key set
 * below). Each edge starts with the node flags its own build is deployed with (the docker-compose.yml
 * beside that `dist`: bench/support/deployed-launch.ts), so an older build runs as it was deployed and
 * this one as it is. `nodeArgs`: node flags instead of those; `extraNodeArgs`: flags added to them
 * (`--cpu-prof --cpu-prof-dir=DIR` to profile). `env`: extra environment for that edge.
 * `telemetry: true`: traces and metrics on, exported to an OTLP receiver in this process (as in
 * bench:overhead), e.g. `{"label":"1 in 100","telemetry":true,"env":{"OTEL_TRACES_SAMPLER":
 * "parentbased_traceidratio","OTEL_TRACES_SAMPLER_ARG":"0.01"}}` beside `{"label":"off"}`.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, freePort, startBenchPlatform } from './support/bench-platform';
import { deployedNodeArgs } from './support/deployed-launch';
import {
  RoundEdge,
  callMany,
  closeEdgeAgent,
  measureEdgeRounds,
  printRoundsSummary,
  seedLimitedOrg,
} from './support/edge-rounds';
import { otlpEnv, startOtlpSink } from './support/otlp-sink';

interface Variant {
  label: string;
  dist?: string;
  /** Node flags instead of those the build is deployed with. */
  nodeArgs?: string[];
  /** Node flags added to those the build is deployed with (or to nodeArgs). */
  extraNodeArgs?: string[];
  env?: Record<string, string>;
  telemetry?: boolean;
  /** Edges of this variant (EDGE_AB_COPIES by default, 2): their mean is the variant's figure. */
  copies?: number;
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

/** A process's resident set now and at its peak (VmRSS, VmHWM), in MiB. */
function residentMiB(pid: number): { now: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { now: Math.round(kib('VmRSS') / 1024), peak: Math.round(kib('VmHWM') / 1024) };
}

async function main(): Promise<void> {
  const variants = JSON.parse(process.env.EDGE_AB_VARIANTS ?? '[{"label":"this build"}]') as Variant[];
  const rounds = Number(process.env.BENCH_ROUNDS ?? 16);
  const seconds = Number(process.env.BENCH_ROUND_SECONDS ?? 4);
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 64);
  const otlp = await startOtlpSink();
  const p = await startBenchPlatform({ edges: 0 });
  const children: ChildProcess[] = [];
  try {
    // Builds before the Redis shards (#22) read one epoch key for the deployment; the worker sets one per shard.
    await p.redis.set(`${p.env.REDIS_PREFIX}:epoch`, 'edge-ab');
    const edges: (RoundEdge & { label: string })[] = [];
    const copies = Number(process.env.EDGE_AB_COPIES ?? 2);
    for (const v of variants) {
      const dist = v.dist ?? path.join(ROOT, 'dist');
      const nodeArgs = [
        ...(v.nodeArgs ?? deployedNodeArgs(path.dirname(dist), 'mcp-edge')),
        ...(v.extraNodeArgs ?? []),
      ];
      console.log(`${v.label}: node ${[...nodeArgs, path.join(dist, 'apps/mcp-edge/src/main.js')].join(' ')}`);
      for (let c = 0; c < (v.copies ?? copies); c++) {
        const port = await freePort();
        const main = path.join(dist, 'apps/mcp-edge/src/main.js');
        const child = spawn(process.execPath, [...nodeArgs, main], {
          env: { ...p.env, ...(v.telemetry ? otlpEnv(otlp.url) : {}), ...v.env, EDGE_PORT: String(port) },
          stdio: ['ignore', 'ignore', 'inherit'],
        });
        children.push(child);
        const org = await seedLimitedOrg(p);
        edges.push({
          label: v.label,
          variant: v.label,
          url: new URL(`http://127.0.0.1:${port}`),
          pid: child.pid!,
          key: org.key,
        });
      }
    }
    for (const e of edges) await waitHealthy(`${e.url.origin}/healthz`);
    // Warm up (JIT, pools, caches, leases), then measure every edge at once in each round.
    for (const e of edges) {
      await callMany(e.url, e.key, 1, 300);
      await callMany(e.url, e.key, concurrency, 4000);
    }
    // BENCH_MODE=concurrent: every edge at once in each round; `both`: one mode, then the other.
    const mode = process.env.BENCH_MODE ?? 'sequential';
    for (const m of mode === 'both' ? ['concurrent', 'sequential'] : [mode]) {
      const sequentialCalls = m === 'sequential' ? Number(process.env.BENCH_CALLS_PER_ROUND ?? 1500) : undefined;
      console.log(
        sequentialCalls
          ? `\nEdge CPU per call, ${edges.length} edges one after another, c${concurrency}, ${rounds} rounds of ${sequentialCalls} calls an edge:`
          : `\nEdge CPU per call, ${edges.length} edges serving at once, c${concurrency} each, ${rounds} rounds of ${seconds} s:`,
      );
      const summary = await measureEdgeRounds(edges, {
        baseline: variants[0].label,
        rounds,
        seconds,
        concurrency,
        sequentialCalls,
        log: (line) => console.log(line),
      });
      console.log(`\nAgainst ${variants[0].label} (per round, the mean of each variant's edges; median over rounds):`);
      printRoundsSummary(summary);
      console.log(JSON.stringify({ bench: 'edge-ab', mode: m, concurrency, seconds, sequentialCalls, ...summary }));
    }
    // What each edge holds in memory after the run (a heap or young-generation flag's cost), in MiB.
    console.log('\nResident memory after the run (now / peak, MiB):');
    for (const v of variants) {
      const own = edges.filter((e) => e.variant === v.label).map((e) => residentMiB(e.pid));
      console.log(`  ${v.label.padEnd(30)} ${own.map((m) => `${m.now} / ${m.peak}`).join(', ')}`);
    }
  } finally {
    closeEdgeAgent();
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
