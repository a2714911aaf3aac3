/**
 * `npm run bench:overhead`: the edge's added latency and throughput against calling the same
 * upstream directly, in one run, at concurrency 1 and 64. The upstream is the bench's fixture
 * server (a hand-written MCP responder answering at once); the edge has policy, rate limit, price
 * and budgets at all four levels on. A third path, a bare pass-through proxy (node:http and undici,
 * no governance), is the floor: what any hop costs on this machine. All paths use the same raw HTTP
 * client (keep-alive), so only what sits between client and upstream differs.
 *
 * Telemetry's cost: six more edges, each serving its own organisation (set up as the first's): two
 * with OpenTelemetry off (as by default) and four with tracing and metrics on, exporting OTLP/HTTP
 * (protobuf, the SDK's default) to a receiver in this process that takes and drops it, as a
 * collector would: one tracing every call, one sampling a call in ten and two a call in a hundred
 * (parentbased_traceidratio 0.1 and 0.01, the last the recommended setting). They serve one run
 * each per round (at c1, and at c64 BENCH_TELEMETRY_CALLS calls each, 1500), in an order that
 * rotates, over BENCH_TELEMETRY_ROUNDS rounds (16); at c64 each variant's CPU per call (every
 * thread's) against the mean of the two edges with telemetry off is taken per round, and the median
 * over the rounds is printed with its spread, beside the noise: the two edges with telemetry off
 * against each other, measured the same way (bench/support/edge-rounds.ts). A ratio per round
 * compares runs seconds apart, so the machine's drift over a run (other benches, tests) cancels;
 * the median leaves out a round that one of them disturbed. (Until 2026-11-27 one edge per
 * variant, CPU summed over the rounds: two identical edges measured up to 10-20 % apart.)
 *
 * The agent trail (issue 29) is an organisation's setting, METADATA by default: the first edge also
 * serves a second, identical organisation with the trail OFF, in the same rounds, so the cost of
 * recording a call's trail step is the difference of the edge's CPU per call between the two. A
 * third organisation, also OFF, is measured the same way as a control: its ratio to the second is
 * the bench's own noise in that run (two identical paths), to read the trail's ratio against.
 */
import { ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { closeEdgeAgent, formatRatio, measureEdgeRounds, seedLimitedOrg } from './support/edge-rounds';
import {
  BenchPlatform,
  SeededOrg,
  benchRedisMode,
  machineBusyCpuMs,
  processCpuMs,
  startBenchPlatform,
} from './support/bench-platform';
import { otlpEnv, startOtlpSink } from './support/otlp-sink';

interface Target {
  url: URL;
  headers: Record<string, string>;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ping', arguments: {} } });

function callOnce(t: Target, body: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: t.url.hostname,
        port: t.url.port,
        path: t.url.pathname,
        method: 'POST',
        agent,
        headers: { ...t.headers, 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          if (res.statusCode !== 200 || text.includes('"isError":true'))
            reject(new Error(`bad answer ${res.statusCode}: ${text.slice(0, 300)}`));
          else resolve(performance.now() - started);
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function run(
  t: Target,
  body: string,
  concurrency: number,
  total: number,
): Promise<{ latencies: number[]; seconds: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        latencies.push(await callOnce(t, body));
      }
    }),
  );
  return { latencies, seconds: (performance.now() - started) / 1000 };
}

function emptyRun(): { latencies: number[]; seconds: number } {
  return { latencies: [], seconds: 0 };
}

function addRun(sum: { latencies: number[]; seconds: number }, r: { latencies: number[]; seconds: number }): void {
  for (const l of r.latencies) sum.latencies.push(l);
  sum.seconds += r.seconds;
}

/** 0 to n-1, starting at `round` mod n: each goes first equally often over n rounds. */
function rotated(n: number, round: number): number[] {
  return Array.from({ length: n }, (_, i) => (i + round) % n);
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const round = (n: number, d = 3) => Math.round(n * 10 ** d) / 10 ** d;

/** Starts the pass-through proxy in front of `target` and resolves with it and its URL. */
function startProxy(target: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [path.join(__dirname, 'support', 'pass-through-proxy.main.js')], {
    env: { ...process.env, PROXY_TARGET_URL: target },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const line = buf.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve({ child, url: JSON.parse(line).url as string });
    });
    child.once('exit', (code) => reject(new Error(`proxy exited (${code}) before announcing itself`)));
  });
}

/**
 * The telemetry edges (edges 1 to 6): two with it off, the baseline of the others, which have it on
 * (OTLP traces and metrics). Edges with the same label are copies, averaged per round.
 */
const OFF = 'telemetry off';
const ONE_IN_100 = {
  label: '1 call in 100 traced',
  env: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' },
};
const TELEMETRY: { label: string; env: Record<string, string>; on?: false }[] = [
  { label: OFF, env: {}, on: false },
  { label: OFF, env: {}, on: false },
  { label: 'every call traced', env: {} },
  {
    label: '1 call in 10 traced',
    env: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' },
  },
  ONE_IN_100,
  ONE_IN_100,
];
/** The first edge of each telemetry variant: the one its concurrency-1 latency is measured on. */
const FIRST_OF_VARIANT = TELEMETRY.flatMap((t, i) =>
  TELEMETRY.findIndex((u) => u.label === t.label) === i ? [i] : [],
);

async function main(): Promise<void> {
  const total1 = Number(process.env.BENCH_CALLS_C1 ?? 3000);
  const total64 = Number(process.env.BENCH_CALLS_C64 ?? 20000);
  let p: BenchPlatform | undefined;
  let proxyChild: ChildProcess | undefined;
  const otlp = await startOtlpSink();
  try {
    // Edge 0: telemetry off. The others: traces and metrics on, exporting to the sink; every call
    // traced (the SDK's default sampler), then one call in ten and one in a hundred (docs/operations.md).
    const otelEnv = otlpEnv(otlp.url);
    p = await startBenchPlatform({
      edges: 1 + TELEMETRY.length,
      edgeEnv: [{}, ...TELEMETRY.map((t) => (t.on === false ? t.env : { ...otelEnv, ...t.env }))],
    });
    const started = await startProxy(p.fixtureUrl);
    proxyChild = started.child;
    // Every level has a budget and a rate limit, far from their limits, so every check runs.
    const org = await seedLimitedOrg(p);
    const untrailed = await seedLimitedOrg(p);
    await p.api('PATCH', `/v1/orgs/${untrailed.orgId}`, { trailMode: 'OFF' });
    const control = await seedLimitedOrg(p);
    await p.api('PATCH', `/v1/orgs/${control.orgId}`, { trailMode: 'OFF' });

    const direct: Target = {
      url: new URL(p.fixtureUrl),
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    };
    const edge: Target = {
      url: new URL(`${p.edgeUrls[0]}/mcp`),
      headers: { ...direct.headers, Authorization: `Bearer ${org.key}` },
    };
    // The same edge and calls, for the organisation that keeps no trail.
    const trailOff: Target = { ...edge, headers: { ...edge.headers, Authorization: `Bearer ${untrailed.key}` } };
    const trailOffControl: Target = { ...edge, headers: { ...edge.headers, Authorization: `Bearer ${control.key}` } };
    // Each telemetry edge serves its own organisation: edges serving one at the same time would pass
    // its admission leases back and forth.
    const telemetryOrgs: SeededOrg[] = [];
    for (let i = 0; i < TELEMETRY.length; i++) telemetryOrgs.push(await seedLimitedOrg(p));
    const withTelemetry: Target[] = TELEMETRY.map((_, i) => ({
      url: new URL(`${p!.edgeUrls[i + 1]}/mcp`),
      headers: { ...direct.headers, Authorization: `Bearer ${telemetryOrgs[i].key}` },
    }));
    const proxy: Target = { url: new URL(started.url), headers: direct.headers };
    const edgeBody = BODY.replace('"ping"', '"fixture__ping"');

    // Warm up every path the same way (JIT, pools, caches) at both concurrencies: steady state is measured.
    const warmUp = Number(process.env.BENCH_WARMUP_CALLS ?? 4000);
    for (const [target, body] of [
      [direct, BODY],
      [proxy, BODY],
      [edge, edgeBody],
      [trailOff, edgeBody],
      [trailOffControl, edgeBody],
      ...withTelemetry.map((t) => [t, edgeBody] as const),
    ] as const) {
      await run(target, body, 1, warmUp / 4);
      await run(target, body, 64, warmUp);
    }

    // CPU per call of every process on the path (this machine's cores are shared by all of them,
    // so the edge's own CPU, not only wall time, says what it costs).
    // On a cluster (BENCH_REDIS=cluster), Redis' CPU is that of all six nodes.
    const redisPids = p.cluster
      ? p.cluster.nodes.map((n) => n.pid)
      : [Number(/process_id:(\d+)/.exec(await (p.redis as Redis).info('server'))?.[1])];
    const cpuPids = {
      edge: [p.pids.edges[0]],
      proxy: [proxyChild.pid!],
      upstream: [p.pids.fixture],
      worker: [p.pids.worker],
      redis: redisPids,
    };
    const cpuNow = () => {
      const client = process.cpuUsage();
      return {
        ...Object.fromEntries(
          Object.entries(cpuPids).map(([k, pids]) => [k, pids.reduce((sum, pid) => sum + processCpuMs(pid), 0)]),
        ),
        client: (client.user + client.system) / 1000,
        machine: machineBusyCpuMs(),
      };
    };
    const emptyCpu = (): Record<string, number> => ({});
    const addCpu = (sum: Record<string, number>, before: Record<string, number>, after: Record<string, number>) => {
      for (const k of Object.keys(before)) sum[k] = (sum[k] ?? 0) + after[k] - before[k];
    };
    const cpuPerCall = (sum: Record<string, number>, calls: number) =>
      Object.fromEntries(Object.entries(sum).map(([k, v]) => [k, round(v / calls, 4)]));

    // Each measurement alternates direct and edge rounds, so a machine that drifts (a shared host
    // speeding up or slowing down) weighs on both paths alike; CPU is summed per path. A multiple of
    // three and four, so trail on, off and the control, and the four telemetry edges, each go first
    // equally often (BENCH_ROUNDS: more, shorter rounds spread one run's garbage collection, paid in
    // the next, more evenly).
    const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12);
    const d1 = emptyRun();
    const p1 = emptyRun();
    const e1 = emptyRun();
    const t1 = TELEMETRY.map(emptyRun);
    // Concurrency 1: one edge of each telemetry variant, one run each per round in a rotating order.
    for (let r = 0; r < ROUNDS; r++) {
      addRun(d1, await run(direct, BODY, 1, total1 / ROUNDS));
      addRun(p1, await run(proxy, BODY, 1, total1 / ROUNDS));
      addRun(e1, await run(edge, edgeBody, 1, total1 / ROUNDS));
      for (const k of rotated(FIRST_OF_VARIANT.length, r)) {
        const i = FIRST_OF_VARIANT[k];
        addRun(t1[i], await run(withTelemetry[i], edgeBody, 1, total1 / ROUNDS));
      }
    }
    const d64 = emptyRun();
    const p64 = emptyRun();
    const e64 = emptyRun();
    const cpuDirect = emptyCpu();
    const cpuProxy = emptyCpu();
    const cpuEdge = emptyCpu();
    const cpuTrailOff = emptyCpu();
    const o64 = emptyRun();
    const cpuControl = emptyCpu();
    const c64 = emptyRun();
    for (let r = 0; r < ROUNDS; r++) {
      const before = cpuNow();
      addRun(d64, await run(direct, BODY, 64, total64 / ROUNDS));
      const afterDirect = cpuNow();
      addRun(p64, await run(proxy, BODY, 64, total64 / ROUNDS));
      const afterProxy = cpuNow();
      addCpu(cpuDirect, before, afterDirect);
      addCpu(cpuProxy, afterDirect, afterProxy);
      // Trail on, off and the control take turns going first, so warming or drift weighs on all alike.
      const edgeRuns = [
        { target: edge, latencies: e64, cpuSum: cpuEdge },
        { target: trailOff, latencies: o64, cpuSum: cpuTrailOff },
        { target: trailOffControl, latencies: c64, cpuSum: cpuControl },
      ];
      for (const e of [...edgeRuns.slice(r % 3), ...edgeRuns.slice(0, r % 3)]) {
        const beforeE = cpuNow();
        addRun(e.latencies, await run(e.target, edgeBody, 64, total64 / ROUNDS));
        addCpu(e.cpuSum, beforeE, cpuNow());
      }
    }

    // At load (c64): the telemetry edges one after another in each round, in a rotating order, the
    // ratio taken per round (bench/support/edge-rounds.ts); BENCH_TELEMETRY_MODE=concurrent: all at
    // once in each round, for BENCH_ROUND_SECONDS.
    const telemetryConcurrency = Number(process.env.BENCH_TELEMETRY_CONCURRENCY ?? 64);
    const telemetryConcurrent = process.env.BENCH_TELEMETRY_MODE === 'concurrent';
    const telemetryRounds = await measureEdgeRounds(
      TELEMETRY.map((t, i) => ({
        variant: t.label,
        pid: p!.pids.edges[i + 1],
        url: new URL(p!.edgeUrls[i + 1]),
        key: telemetryOrgs[i].key,
      })),
      {
        baseline: OFF,
        rounds: Number(process.env.BENCH_TELEMETRY_ROUNDS ?? 16),
        seconds: Number(process.env.BENCH_ROUND_SECONDS ?? 4),
        concurrency: telemetryConcurrency,
        sequentialCalls: telemetryConcurrent ? undefined : Number(process.env.BENCH_TELEMETRY_CALLS ?? 1500),
      },
    );
    const offFigures = telemetryRounds.variants.find((v) => v.variant === OFF)!;

    const s = (x: number[]) => [...x].sort((a, b) => a - b);
    const [sd1, sp1, se1, sd64, sp64, se64] = [d1, p1, e1, d64, p64, e64].map((r) => s(r.latencies));
    const cpu = {
      direct: cpuPerCall(cpuDirect, total64),
      proxy: cpuPerCall(cpuProxy, total64),
      edge: cpuPerCall(cpuEdge, total64),
      trailOff: cpuPerCall(cpuTrailOff, total64),
      trailOffControl: cpuPerCall(cpuControl, total64),
    };
    // The telemetry group's baseline: telemetry off, measured as the edges with it on are.
    const so1 = s(t1[0].latencies);
    const [edgeAddedP50, proxyAddedP50] = [pct(se1, 50) - pct(sd1, 50), pct(sp1, 50) - pct(sd1, 50)];
    const figures = {
      redis: benchRedisMode(),
      bench: 'overhead',
      upstream: process.env.BENCH_FIXTURE === 'sdk' ? 'sdk-fixture' : 'hand-written',
      calls: { c1: total1, c64: total64 },
      c1: {
        directP50Ms: round(pct(sd1, 50)),
        edgeP50Ms: round(pct(se1, 50)),
        addedP50Ms: round(pct(se1, 50) - pct(sd1, 50)),
        directP99Ms: round(pct(sd1, 99)),
        edgeP99Ms: round(pct(se1, 99)),
        addedP99Ms: round(pct(se1, 99) - pct(sd1, 99)),
        proxyP50Ms: round(pct(sp1, 50)),
        proxyAddedP50Ms: round(proxyAddedP50),
      },
      c64: {
        directRps: Math.round(total64 / d64.seconds),
        edgeRps: Math.round(total64 / e64.seconds),
        throughputRatio: round(total64 / e64.seconds / (total64 / d64.seconds)),
        addedP50Ms: round(pct(se64, 50) - pct(sd64, 50)),
        addedP99Ms: round(pct(se64, 99) - pct(sd64, 99)),
        proxyRps: Math.round(total64 / p64.seconds),
        proxyAddedP50Ms: round(pct(sp64, 50) - pct(sd64, 50)),
        proxyThroughputRatio: round(total64 / p64.seconds / (total64 / d64.seconds)),
      },
      cpuMsPerCall: cpu,
      // The edge against the bare proxy: how many hops' worth of latency and CPU the governance costs.
      edgeVsProxy: {
        addedP50Ratio: round(edgeAddedP50 / proxyAddedP50, 2),
        cpuPerCallRatio: round(cpu.edge.edge / cpu.proxy.proxy, 2),
        throughputRatio: round(p64.seconds / e64.seconds, 3),
      },
      // The edges with tracing and metrics on (OTLP export) against the two with them off, all
      // serving at once (CPU per call: the median of the per-round ratios), beside the noise.
      telemetryConcurrency,
      telemetryMode: telemetryConcurrent ? 'concurrent' : 'sequential',
      telemetryRounds: telemetryRounds.rounds,
      telemetryOffCpuMsPerCall: offFigures.cpuMsPerCall,
      telemetryOffCopiesCpuMsPerCall: offFigures.copiesCpuMsPerCall,
      telemetryNoise: telemetryRounds.noise!,
      telemetryOn: telemetryRounds.variants.flatMap((v) => {
        if (!v.vsBaseline) return [];
        const st1 = s(t1[TELEMETRY.findIndex((t) => t.label === v.variant)].latencies);
        return {
          traces: v.variant,
          edges: v.edges,
          c1AddedP50Ms: round(pct(st1, 50) - pct(sd1, 50)),
          c1P50MsOverOff: round(pct(st1, 50) - pct(so1, 50)),
          loadP50MsOverOff: v.vsBaseline.p50MsOver,
          cpuMsPerCall: v.cpuMsPerCall,
          copiesCpuMsPerCall: v.copiesCpuMsPerCall,
          cpuPerCallVsOff: v.vsBaseline,
        };
      }),
      // The edge serving an org with the trail METADATA (the default; `edge` above) against one with it OFF.
      trailMetadataOn: {
        edgeCpuMsPerCall: cpu.edge.edge,
        edgeCpuMsPerCallTrailOff: cpu.trailOff.edge,
        edgeCpuPerCallVsOff: round(cpu.edge.edge / cpu.trailOff.edge, 3),
        workerCpuMsPerCall: cpu.edge.worker,
        workerCpuMsPerCallTrailOff: cpu.trailOff.worker,
        redisCpuMsPerCall: cpu.edge.redis,
        redisCpuMsPerCallTrailOff: cpu.trailOff.redis,
        c64Rps: Math.round(total64 / e64.seconds),
        c64RpsTrailOff: Math.round(total64 / o64.seconds),
        // Two organisations with the trail OFF on the same edge: how far apart identical paths measure.
        controlEdgeCpuMsPerCall: cpu.trailOffControl.edge,
        controlEdgeCpuPerCallVsOff: round(cpu.trailOffControl.edge / cpu.trailOff.edge, 3),
      },
      otlpRequests: otlp.requests(),
      targets: {
        addedP50MsBelow: 1,
        throughputRatioAtLeast: 0.7,
        telemetryCpuPerCallVsOffAtMost: 1.1,
        trailCpuPerCallVsOffAtMost: 1.05,
      },
    };
    console.log(`\nEdge overhead (same upstream, direct vs through the governed edge), Redis: ${benchRedisMode()}`);
    console.log(
      `  concurrency 1:  p50 direct ${figures.c1.directP50Ms} ms, edge ${figures.c1.edgeP50Ms} ms -> added ${figures.c1.addedP50Ms} ms; p99 added ${figures.c1.addedP99Ms} ms`,
    );
    console.log(
      `  concurrency 64: direct ${figures.c64.directRps} calls/s, edge ${figures.c64.edgeRps} calls/s -> ratio ${figures.c64.throughputRatio}`,
    );
    console.log(
      `  bare proxy:     p50 added ${figures.c1.proxyAddedP50Ms} ms at c1, ${figures.c64.proxyRps} calls/s at c64 (ratio ${figures.c64.proxyThroughputRatio}); CPU per call ${cpu.proxy.proxy} ms`,
    );
    const c = figures.cpuMsPerCall;
    console.log(
      `  CPU per call at c64: edge ${c.edge.edge} ms, upstream ${c.edge.upstream} ms (direct run: ${c.direct.upstream} ms), redis ${c.edge.redis} ms, worker ${c.edge.worker} ms, client ${c.edge.client} ms (direct run: ${c.direct.client} ms); whole machine ${c.edge.machine} ms (direct run: ${c.direct.machine} ms)`,
    );
    console.log(
      `  edge vs bare proxy: added p50 x${figures.edgeVsProxy.addedP50Ratio}, CPU per call x${figures.edgeVsProxy.cpuPerCallRatio}`,
    );
    console.log(
      `  telemetry, ${TELEMETRY.length} edges ${telemetryConcurrent ? 'serving at once' : 'one after another'} (c${telemetryConcurrency}, ${telemetryRounds.rounds} rounds), off (2 edges): CPU per call ${offFigures.cpuMsPerCall} ms (${offFigures.copiesCpuMsPerCall.join(' and ')})`,
    );
    for (const t of figures.telemetryOn)
      console.log(
        `  telemetry on (OTLP traces + metrics, ${t.traces}, ${t.edges} edge${t.edges > 1 ? 's' : ''}) vs off: c1 p50 +${t.c1P50MsOverOff} ms (added vs direct ${t.c1AddedP50Ms} ms); at load p50 +${t.loadP50MsOverOff} ms; edge CPU per call ${t.cpuMsPerCall} ms -> ${formatRatio(t.cpuPerCallVsOff)} (target at most x1.1)`,
      );
    console.log(
      `  noise: the two edges with telemetry off, one against the other: ${formatRatio(figures.telemetryNoise)}`,
    );
    const tr = figures.trailMetadataOn;
    console.log(
      `  trail METADATA (default) vs OFF, same edge and rounds: edge CPU per call ${tr.edgeCpuMsPerCall} ms vs ${tr.edgeCpuMsPerCallTrailOff} ms -> x${tr.edgeCpuPerCallVsOff} (target at most x1.05); worker ${tr.workerCpuMsPerCall} vs ${tr.workerCpuMsPerCallTrailOff} ms, redis ${tr.redisCpuMsPerCall} vs ${tr.redisCpuMsPerCallTrailOff} ms; c64 ${tr.c64Rps} vs ${tr.c64RpsTrailOff} calls/s; control (both OFF) x${tr.controlEdgeCpuPerCallVsOff}`,
    );
    console.log(`  ${figures.otlpRequests} OTLP requests received`);
    console.log(JSON.stringify(figures));
  } finally {
    agent.destroy();
    closeEdgeAgent();
    proxyChild?.kill();
    await p?.close();
    otlp.close();
  }
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exit(1);
});
