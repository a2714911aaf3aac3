import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { BenchPlatform, SeededOrg, seedGovernedOrg } from './bench-platform';

/**
 * Edges measured side by side, in rounds, for CPU-per-call ratios with their noise beside them.
 * Each variant runs as two or more identical edges (copies), each serving its own organisation. In a
 * round the edges serve a run each, one after another in an order that rotates (sequentialRound),
 * or all at once for the same wall time (concurrentRound). An edge's CPU in a round is the sum of
 * its threads' time on a CPU (`/proc/<pid>/task/<tid>/schedstat`, nanoseconds; the 10 ms ticks of
 * `/proc/<pid>/stat` are a few per cent of a run). A variant's ratio to the baseline is taken per
 * round, from runs seconds apart, so the machine's drift over a run (other benches, tests) cancels,
 * and the median over the rounds is reported with its spread (one disturbed round moves it by one
 * place) and the pooled ratio; the noise is the baseline's first copy against its second, the same
 * way. On a loaded 2-core machine concurrent rounds measured worse: each edge gets scraps of a core,
 * its CPU per call doubles and swings with the scheduler (docs/operations.md, "Telemetry's cost").
 */

export interface RoundEdge {
  /** Which variant the edge belongs to: edges of one variant are copies, averaged per round. */
  variant: string;
  pid: number;
  url: URL;
  key: string;
}

export interface EdgeRound {
  calls: number;
  cpuMs: number;
  /** Latency of each call answered in the round, in milliseconds. */
  latencies: number[];
}

// Idle connections are dropped after 4 s, before the edge's server closes them (5 s): a connection
// reused just as the server closed it failed a run now and then with "socket hang up".
const agent = new http.Agent({ keepAlive: true, maxSockets: 512, timeout: 4000 });
const BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'fixture__ping', arguments: {} },
});

/** One governed `tools/call` through an edge; resolves with its latency in milliseconds. */
export function callEdge(url: URL, key: string): Promise<number> {
  const started = performance.now();
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
            : resolve(performance.now() - started),
        );
      },
    );
    req.on('error', reject);
    req.end(BODY);
  });
}

export function closeEdgeAgent(): void {
  agent.destroy();
}

/** CPU time of every thread of a process, in milliseconds (Linux scheduler statistics, ns resolution). */
export function threadsCpuMs(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ', 1)[0]);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return ns / 1e6;
}

/**
 * An organisation as seedGovernedOrg makes it, with a budget and a rate limit at every level, far
 * from their limits, so every check runs. Edges measured at once each serve their own: edges
 * serving one organisation at the same time would pass its admission leases back and forth.
 */
export async function seedLimitedOrg(p: BenchPlatform): Promise<SeededOrg> {
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
  return org;
}

/** `total` calls through one edge from `concurrency` callers (warm-up). */
export async function callMany(url: URL, key: string, concurrency: number, total: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        await callEdge(url, key);
      }
    }),
  );
}

/** One round: every edge at once, `concurrency` callers each, new calls started for `seconds`. */
export async function concurrentRound(edges: RoundEdge[], concurrency: number, seconds: number): Promise<EdgeRound[]> {
  const before = edges.map((e) => threadsCpuMs(e.pid));
  const deadline = performance.now() + seconds * 1000;
  const rounds = await Promise.all(
    edges.map(async (e) => {
      const latencies: number[] = [];
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (performance.now() < deadline) latencies.push(await callEdge(e.url, e.key));
        }),
      );
      return latencies;
    }),
  );
  return edges.map((e, i) => ({
    calls: rounds[i].length,
    cpuMs: threadsCpuMs(e.pid) - before[i],
    latencies: rounds[i],
  }));
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

const r3 = (n: number) => Math.round(n * 1000) / 1000;
const r4 = (n: number) => Math.round(n * 10000) / 10000;

/** A ratio over the rounds: the median of the per-round ratios, their interquartile range and extremes. */
export interface RoundRatio {
  median: number;
  q1: number;
  q3: number;
  min: number;
  max: number;
  /** Over all rounds together: summed CPU over summed calls, one against the other. */
  pooled: number;
}

function ratioOf(perRound: number[], pooled: number): RoundRatio {
  return {
    median: r3(median(perRound)),
    q1: r3(quantile(perRound, 0.25)),
    q3: r3(quantile(perRound, 0.75)),
    min: r3(Math.min(...perRound)),
    max: r3(Math.max(...perRound)),
    pooled: r3(pooled),
  };
}

export function formatRatio(r: RoundRatio): string {
  return `x${r.median.toFixed(3)} (rounds' IQR ${r.q1.toFixed(3)}-${r.q3.toFixed(3)}, range ${r.min.toFixed(3)}-${r.max.toFixed(3)}; pooled x${r.pooled.toFixed(3)})`;
}

export interface VariantFigures {
  variant: string;
  edges: number;
  calls: number;
  cpuMsPerCall: number;
  /** Each copy's CPU per call over all rounds. */
  copiesCpuMsPerCall: number[];
  /**
   * CPU per call over the whole of the measured rounds, the time between the edge's own turns
   * included (what it does on timers while the others serve: span and metric exports, GC, compiles),
   * the mean of its copies; and against the baseline's, the same way (pooled).
   */
  wholeRunCpuMsPerCall: number;
  wholeRunVsBaseline?: number;
  p50Ms: number;
  p99Ms: number;
  /** Against the baseline variant (absent for the baseline itself). */
  vsBaseline?: RoundRatio & { p50MsOver: number };
}

export interface RoundsSummary {
  baseline: string;
  rounds: number;
  variants: VariantFigures[];
  /**
   * The bench's noise: the baseline's first copy against its second, per round (two identical
   * edges; needs two copies). A variant's ratio means something only as far as it stands out of this.
   */
  noise?: RoundRatio;
}

/**
 * One round the other way: the edges one after another (in an order rotating with `round`, so each
 * goes first equally often), each serving `calls` calls alone.
 */
export async function sequentialRound(
  edges: RoundEdge[],
  concurrency: number,
  calls: number,
  round: number,
): Promise<EdgeRound[]> {
  const out: EdgeRound[] = new Array(edges.length);
  for (let k = 0; k < edges.length; k++) {
    const i = (k + round) % edges.length;
    const e = edges[i];
    const latencies: number[] = [];
    const before = threadsCpuMs(e.pid);
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < calls) {
          next++;
          latencies.push(await callEdge(e.url, e.key));
        }
      }),
    );
    out[i] = { calls: latencies.length, cpuMs: threadsCpuMs(e.pid) - before, latencies };
  }
  return out;
}

/**
 * Runs `rounds` rounds over `edges` (concurrentRound, or with `sequentialCalls` sequentialRound of
 * that many calls an edge) after one unmeasured round, and compares each variant with `baseline`:
 * per round, the mean CPU per call of the variant's copies over the mean of the baseline's.
 */
export async function measureEdgeRounds(
  edges: RoundEdge[],
  opts: {
    baseline: string;
    rounds: number;
    seconds: number;
    concurrency: number;
    sequentialCalls?: number;
    log?: (line: string) => void;
  },
): Promise<RoundsSummary> {
  const oneRound = (r: number) =>
    opts.sequentialCalls
      ? sequentialRound(edges, opts.concurrency, opts.sequentialCalls, r)
      : concurrentRound(edges, opts.concurrency, opts.seconds);
  // Unmeasured: connections opened, every edge busy, before the first measured round.
  await oneRound(0);
  const runStart = edges.map((e) => threadsCpuMs(e.pid));
  const perRound: EdgeRound[][] = [];
  for (let r = 0; r < opts.rounds; r++) {
    const round = await oneRound(r);
    perRound.push(round);
    opts.log?.(
      `  round ${r + 1}/${opts.rounds}: ` +
        round.map((x, i) => `${edges[i].variant} ${(x.cpuMs / x.calls).toFixed(4)} ms (${x.calls})`).join(', '),
    );
  }
  const runCpuMs = edges.map((e, i) => threadsCpuMs(e.pid) - runStart[i]);
  const variants = [...new Set(edges.map((e) => e.variant))];
  const idx = (v: string) => edges.flatMap((e, i) => (e.variant === v ? [i] : []));
  const meanPerCall = (round: EdgeRound[], is: number[]) =>
    is.reduce((s, i) => s + round[i].cpuMs / round[i].calls, 0) / is.length;
  const pooledPerCall = (is: number[]) =>
    is.reduce((s, i) => {
      const cpu = perRound.reduce((a, round) => a + round[i].cpuMs, 0);
      const calls = perRound.reduce((a, round) => a + round[i].calls, 0);
      return s + cpu / calls;
    }, 0) / is.length;
  const wholeRunPerCall = (is: number[]) =>
    is.reduce((s, i) => s + runCpuMs[i] / perRound.reduce((a, round) => a + round[i].calls, 0), 0) / is.length;
  const latencies = (is: number[]) => is.flatMap((i) => perRound.flatMap((round) => round[i].latencies));
  const base = idx(opts.baseline);
  const baseP50 = median(latencies(base));
  const figures: VariantFigures[] = variants.map((v) => {
    const is = idx(v);
    const lat = latencies(is);
    const f: VariantFigures = {
      variant: v,
      edges: is.length,
      calls: is.reduce((s, i) => s + perRound.reduce((a, round) => a + round[i].calls, 0), 0),
      cpuMsPerCall: r4(pooledPerCall(is)),
      copiesCpuMsPerCall: is.map((i) => r4(pooledPerCall([i]))),
      wholeRunCpuMsPerCall: r4(wholeRunPerCall(is)),
      p50Ms: r3(median(lat)),
      p99Ms: r3(quantile(lat, 0.99)),
    };
    if (v !== opts.baseline) f.wholeRunVsBaseline = r3(wholeRunPerCall(is) / wholeRunPerCall(base));
    if (v !== opts.baseline)
      f.vsBaseline = {
        ...ratioOf(
          perRound.map((round) => meanPerCall(round, is) / meanPerCall(round, base)),
          pooledPerCall(is) / pooledPerCall(base),
        ),
        p50MsOver: r3(median(lat) - baseP50),
      };
    return f;
  });
  const noise =
    base.length >= 2
      ? ratioOf(
          perRound.map((round) => meanPerCall(round, [base[0]]) / meanPerCall(round, [base[1]])),
          pooledPerCall([base[0]]) / pooledPerCall([base[1]]),
        )
      : undefined;
  return { baseline: opts.baseline, rounds: opts.rounds, variants: figures, noise };
}

export function printRoundsSummary(s: RoundsSummary): void {
  for (const v of s.variants) {
    const head = `  ${v.variant.padEnd(30)} ${v.cpuMsPerCall.toFixed(4)} ms/call (${v.copiesCpuMsPerCall.map((c) => c.toFixed(4)).join(', ')}), p50 ${v.p50Ms} ms, p99 ${v.p99Ms} ms`;
    const wholeRun = `    over the whole run (between its turns too): ${v.wholeRunCpuMsPerCall.toFixed(4)} ms/call`;
    console.log(
      v.vsBaseline
        ? `${head}\n    vs ${s.baseline}: CPU per call ${formatRatio(v.vsBaseline)}, p50 +${v.vsBaseline.p50MsOver} ms\n${wholeRun}, x${v.wholeRunVsBaseline?.toFixed(3)}`
        : `${head}  (baseline)\n${wholeRun}`,
    );
  }
  if (s.noise) console.log(`  noise, ${s.baseline} against its own second copy: ${formatRatio(s.noise)}`);
}
