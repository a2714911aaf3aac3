/**
 * `npm run bench:hostile`: what a key holder sending hostile bodies costs everyone else on the
 * shared edge. One org's key calls at concurrency 8 (baseline); then the same, while two attacker
 * connections of another org send worst-case 4 MiB bodies as fast as the edge answers them
 * (deeply nested, millions of keys, millions of array items, one huge string). Baseline and attack
 * rounds alternate in the same run, so a drifting machine weighs on both alike; the figures are
 * the honest key's throughput and p95 under attack as ratios of its baseline.
 * Targets: throughput ratio at least 0.8, p95 ratio at most 2.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import {
  BenchPlatform,
  machineBusyCpuMs,
  processCpuMs,
  seedGovernedOrg,
  startBenchPlatform,
} from './support/bench-platform';

const BODY_BYTES = 4 * 1024 * 1024 - 512;
const HONEST_CONCURRENCY = 8;
const ATTACKERS = 2;

const honestAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** A tools/call envelope whose arguments are `args` (raw JSON text). */
function callBody(args: string): Buffer {
  return Buffer.from(
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fixture__ping","arguments":${args}}}`,
  );
}

/**
 * The worst cases: 4 MiB (what the edge used to read and parse) deeply nested, with millions of
 * keys, of array items, or one huge string; and the same kinds just inside the body limit
 * (1 MiB + 64 KiB), which the edge must read before it can refuse them.
 */
function hostileBodies(): { kind: string; body: Buffer }[] {
  const kinds = (label: string, bytes: number) => {
    const room = bytes - 120;
    const depth = Math.floor(room / 6);
    const keys = Math.floor(room / 12);
    const items = Math.floor(room / 2);
    return [
      { kind: `nested-${label}`, body: callBody(`${'{"a":'.repeat(depth)}{}${'}'.repeat(depth)}`) },
      {
        kind: `wide-${label}`,
        body: callBody(
          `{${Array.from({ length: keys }, (_, i) => `"${i.toString(36).padStart(6, '0')}":0`).join(',')}}`,
        ),
      },
      { kind: `items-${label}`, body: callBody(`{"a":[${'0,'.repeat(items - 1)}0]}`) },
      { kind: `string-${label}`, body: callBody(`{"a":"${'x'.repeat(room)}"}`) },
    ];
  };
  return [...kinds('4MiB', BODY_BYTES), ...kinds('limit', 1024 * 1024 + 64 * 1024 - 8)];
}

interface Target {
  url: URL;
  key: string;
}

function post(
  t: Target,
  body: Buffer,
  agent: http.Agent | false,
): Promise<{ status: number; ms: number; text: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: t.url.hostname,
        port: t.url.port,
        path: t.url.pathname,
        method: 'POST',
        agent,
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          Authorization: `Bearer ${t.key}`,
          'Content-Length': body.length,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The honest key calling for `ms` at a fixed concurrency: its calls per second and latencies. */
async function honestLoad(t: Target, ms: number): Promise<{ calls: number; seconds: number; latencies: number[] }> {
  const body = callBody('{}');
  const latencies: number[] = [];
  const started = performance.now();
  const until = started + ms;
  await Promise.all(
    Array.from({ length: HONEST_CONCURRENCY }, async () => {
      while (performance.now() < until) {
        // A kept-alive socket the edge closed as idle just as it was reused: send again.
        const answer = await post(t, body, honestAgent).catch((err: NodeJS.ErrnoException) => {
          if (err.code === 'ECONNRESET') return post(t, body, honestAgent);
          throw err;
        });
        if (answer.status !== 200 || answer.text.includes('"isError":true'))
          throw new Error(`honest call failed ${answer.status}: ${answer.text.slice(0, 300)}`);
        latencies.push(answer.ms);
      }
    }),
  );
  return { calls: latencies.length, seconds: (performance.now() - started) / 1000, latencies };
}

/** Attacker connections sending the hostile bodies in turn, each the moment the last is answered, until SIGTERM. */
async function runAttacker(): Promise<void> {
  const t: Target = { url: new URL(process.env.ATTACK_URL!), key: process.env.ATTACK_KEY! };
  const bodies = hostileBodies();
  const outcomes = new Map<string, number>();
  let stopped = false;
  process.once('SIGTERM', () => (stopped = true));
  console.log('{"ready":true}');
  await Promise.all(
    Array.from({ length: ATTACKERS }, async (_, a) => {
      for (let i = a; !stopped; i++) {
        const { kind, body } = bodies[i % bodies.length];
        // A new connection each time: the edge closes one whose body it refused unread.
        const outcome = await post(t, body, false).then(
          (r) => `${kind} ${r.status}`,
          (err: NodeJS.ErrnoException) => `${kind} ${err.code ?? 'error'}`,
        );
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
    }),
  );
  console.log(JSON.stringify({ outcomes: Object.fromEntries(outcomes) }));
}

/** Starts the attackers in a process of their own (their sending must not slow the honest client); resolves once they run. */
async function startAttack(t: Target): Promise<{ pid: number; stop: () => Promise<Record<string, number>> }> {
  const child = spawn(process.execPath, [__filename], {
    env: { ...process.env, BENCH_ROLE: 'attacker', ATTACK_URL: t.url.href, ATTACK_KEY: t.key },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('"ready"')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`attacker exited (${code}) before it started`)));
  });
  const stop = async () => {
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
    const line = out.split('\n').find((l) => l.includes('"outcomes"'));
    return line ? (JSON.parse(line) as { outcomes: Record<string, number> }).outcomes : {};
  };
  return { pid: child.pid!, stop };
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const round = (n: number, d = 3) => Math.round(n * 10 ** d) / 10 ** d;

async function main(): Promise<void> {
  const roundMs = Number(process.env.BENCH_ROUND_MS ?? 4000);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  let p: BenchPlatform | undefined;
  try {
    p = await startBenchPlatform({ edges: 1 });
    const honestOrg = await seedGovernedOrg(p, 1);
    const attackerOrg = await seedGovernedOrg(p, 1);
    const url = new URL(`${p.edgeUrls[0]}/mcp`);
    const honest: Target = { url, key: honestOrg.key };
    const attacker: Target = { url, key: attackerOrg.key };

    await honestLoad(honest, 2000); // warm-up: JIT, pools, caches
    const baseline = { calls: 0, seconds: 0, latencies: [] as number[] };
    const attacked = { calls: 0, seconds: 0, latencies: [] as number[] };
    const outcomes = new Map<string, number>();
    const add = (sum: typeof baseline, r: typeof baseline) => {
      sum.calls += r.calls;
      sum.seconds += r.seconds;
      for (const l of r.latencies) sum.latencies.push(l);
    };
    // CPU spent per round (Linux /proc): the edge's, the attackers' process's and the whole machine's
    // (shared with whatever else runs), to tell the edge's cost of refused input from the machine's.
    const cpu = { baselineEdge: 0, attackEdge: 0, attacker: 0, baselineMachine: 0, attackMachine: 0 };
    const edgePid = p.pids.edges[0];
    for (let r = 0; r < rounds; r++) {
      let edge0 = processCpuMs(edgePid);
      let machine0 = machineBusyCpuMs();
      add(baseline, await honestLoad(honest, roundMs));
      cpu.baselineEdge += processCpuMs(edgePid) - edge0;
      cpu.baselineMachine += machineBusyCpuMs() - machine0;
      const attack = await startAttack(attacker);
      let attackerOutcomes: Record<string, number>;
      edge0 = processCpuMs(edgePid);
      machine0 = machineBusyCpuMs();
      const attacker0 = processCpuMs(attack.pid);
      try {
        add(attacked, await honestLoad(honest, roundMs));
        cpu.attackEdge += processCpuMs(edgePid) - edge0;
        cpu.attackMachine += machineBusyCpuMs() - machine0;
        cpu.attacker += processCpuMs(attack.pid) - attacker0;
      } finally {
        // Even when the honest load fails: an attacker left running loads the machine for good.
        attackerOutcomes = await attack.stop();
      }
      for (const [k, n] of Object.entries(attackerOutcomes)) outcomes.set(k, (outcomes.get(k) ?? 0) + n);
    }

    const sb = [...baseline.latencies].sort((a, b) => a - b);
    const sa = [...attacked.latencies].sort((a, b) => a - b);
    const baselineRps = baseline.calls / baseline.seconds;
    const attackedRps = attacked.calls / attacked.seconds;
    const attackerRequests = [...outcomes.values()].reduce((a, b) => a + b, 0);
    const figures = {
      bench: 'hostile-body',
      honestConcurrency: HONEST_CONCURRENCY,
      attackers: ATTACKERS,
      bodyBytes: BODY_BYTES,
      baseline: { rps: Math.round(baselineRps), p50Ms: round(pct(sb, 50)), p95Ms: round(pct(sb, 95)) },
      underAttack: { rps: Math.round(attackedRps), p50Ms: round(pct(sa, 50)), p95Ms: round(pct(sa, 95)) },
      throughputRatio: round(attackedRps / baselineRps),
      p95Ratio: round(pct(sa, 95) / pct(sb, 95)),
      attackerRequestsPerSecond: Math.round(attackerRequests / attacked.seconds),
      // The edge's CPU per honest call in the baseline rounds; under attack, what the edge spent
      // beyond the honest calls it served (at that same cost), per attacker request.
      edgeCpuMsPerHonestCall: round(cpu.baselineEdge / baseline.calls),
      edgeCpuMsPerAttackerRequest: round(
        (cpu.attackEdge - (attacked.calls * cpu.baselineEdge) / baseline.calls) / Math.max(1, attackerRequests),
      ),
      // Cores busy on average: the edge, the attackers' own process, the whole machine.
      cores: {
        edgeBaseline: round(cpu.baselineEdge / 1000 / baseline.seconds, 2),
        edgeUnderAttack: round(cpu.attackEdge / 1000 / attacked.seconds, 2),
        attackerProcess: round(cpu.attacker / 1000 / attacked.seconds, 2),
        machineBaseline: round(cpu.baselineMachine / 1000 / baseline.seconds, 2),
        machineUnderAttack: round(cpu.attackMachine / 1000 / attacked.seconds, 2),
      },
      attackerOutcomes: Object.fromEntries([...outcomes.entries()].sort()),
      targets: { throughputRatioAtLeast: 0.8, p95RatioAtMost: 2 },
    };
    const meets = figures.throughputRatio >= 0.8 && figures.p95Ratio <= 2;
    console.log('\nHostile bodies (another org, 2 connections, worst cases) against an honest key at c8');
    console.log(
      `  baseline:     ${figures.baseline.rps} calls/s, p50 ${figures.baseline.p50Ms} ms, p95 ${figures.baseline.p95Ms} ms`,
    );
    console.log(
      `  under attack: ${figures.underAttack.rps} calls/s, p50 ${figures.underAttack.p50Ms} ms, p95 ${figures.underAttack.p95Ms} ms`,
    );
    console.log(
      `  -> throughput x${figures.throughputRatio} (target >= 0.8), p95 x${figures.p95Ratio} (target <= 2): ${meets ? 'met' : 'NOT met'}`,
    );
    console.log(
      `  attacker: ${figures.attackerRequestsPerSecond} requests/s answered; ${JSON.stringify(figures.attackerOutcomes)}`,
    );
    console.log(
      `  edge CPU: ${figures.edgeCpuMsPerHonestCall} ms per honest call, ${figures.edgeCpuMsPerAttackerRequest} ms per attacker request; cores busy ${JSON.stringify(figures.cores)}`,
    );
    console.log(JSON.stringify(figures));
  } finally {
    honestAgent.destroy();
    await p?.close();
  }
}

(process.env.BENCH_ROLE === 'attacker' ? runAttacker() : main()).catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exit(1);
});
