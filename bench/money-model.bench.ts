/**
 * `npm run bench:money-model`: the model-based run of the money path (tools/money-model, the same
 * model, commands and comparison as test/money-model) for BENCH_MONEY_STEPS steps (10,000 by
 * default) per topology, on standalone Redis and on a Redis Cluster of its own (3 masters, 3
 * replicas, a master failed over as planned or a replica restarted at times), half the steps with admission one call at a time (single calls crashed) and half under
 * leases (edges killed with their leases), malformed records planted in both; both on a virtual clock
 * (sweeps after the TTL, windows, lease renewals, Redis data loss and rebuild). Standalone Redis is a redis-server
 * of the bench's own (append-only file, fsync always) that sequences restart from its file
 * (BENCH_REDIS_URL: an existing one instead, not restarted). Prints the steps, the sequences,
 * the discrepancies between the real money path and the reference model (must be 0: the first
 * one found is printed with fast-check's seed and stops its mode) and the steps per second.
 * BENCH_MONEY_TOPOLOGIES=standalone (or cluster) runs one; BENCH_MONEY_COMMANDS sets a sequence's
 * length (default 100).
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import { startLocalRedisCluster } from '../tools/redis-cluster/local-redis-cluster';
import { startOwnRedis } from '../tools/redis-cluster/own-redis';
import { moneyModelProperty, RunCounts } from '../tools/money-model/money-commands';
import { aofRestarts, clusterRestarts, MoneySystem } from '../tools/money-model/money-system';
import { createBenchDatabase } from './support/bench-platform';

interface ModeResult {
  topology: string;
  admission: 'one-by-one' | 'leases';
  steps: number;
  sequences: number;
  discrepancies: number;
  firstDiscrepancy: string | null;
  seconds: number;
  stepsPerSecond: number;
  byCommand: Record<string, number>;
  msByCommand: Record<string, number>;
}

/** Runs sequences of the model on one system until `steps` steps have run or a discrepancy is found. */
async function runMode(sys: MoneySystem, topology: string, steps: number, maxCommands: number): Promise<ModeResult> {
  const counter: RunCounts = { steps: 0, sequences: 0, byCommand: {}, msByCommand: {} };
  let discrepancies = 0;
  let firstDiscrepancy: string | null = null;
  const started = performance.now();
  while (counter.steps < steps && discrepancies === 0) {
    const seed = Date.now() ^ (Math.random() * 2 ** 31);
    const details = await fc.check(moneyModelProperty({ sys, numRuns: 10, maxCommands }, counter), {
      numRuns: 10,
      seed,
      endOnFailure: true,
    });
    if (details.failed) {
      discrepancies++;
      firstDiscrepancy = `seed ${seed} (MONEY_MODEL_COMMANDS=${maxCommands}): ${String(details.errorInstance)}\n  counterexample: ${fc.stringify(details.counterexample)}`;
    }
  }
  const seconds = (performance.now() - started) / 1000;
  return {
    topology,
    admission: sys.leases ? 'leases' : 'one-by-one',
    steps: counter.steps,
    sequences: counter.sequences,
    discrepancies,
    firstDiscrepancy,
    seconds: Math.round(seconds),
    stepsPerSecond: Math.round(counter.steps / seconds),
    byCommand: counter.byCommand,
    msByCommand: counter.msByCommand,
  };
}

async function main(): Promise<void> {
  const steps = Number(process.env.BENCH_MONEY_STEPS ?? 10_000);
  const maxCommands = Number(process.env.BENCH_MONEY_COMMANDS ?? 100);
  const topologies = (process.env.BENCH_MONEY_TOPOLOGIES ?? 'standalone,cluster').split(',');
  const database = await createBenchDatabase();
  const results: ModeResult[] = [];
  try {
    for (const topology of topologies) {
      const cluster = topology === 'cluster' ? await startLocalRedisCluster() : null;
      // Standalone: a redis-server of the bench's own (append-only, fsync always), restarted mid-sequence.
      const own = !cluster && !process.env.BENCH_REDIS_URL ? await startOwnRedis({ persist: true }) : null;
      const prefix = `tgbench:${randomBytes(4).toString('hex')}`;
      const vars: Record<string, string> = {
        DATABASE_URL: database.url,
        ...(cluster ? { REDIS_CLUSTER_NODES: cluster.seeds } : { REDIS_URL: own?.url ?? process.env.BENCH_REDIS_URL! }),
        REDIS_PREFIX: prefix,
        KEY_HASH_SECRET: randomBytes(24).toString('hex'),
        ENCRYPTION_KEYS: `b1:${randomBytes(32).toString('base64')}`,
        ADMIN_BOOTSTRAP_TOKEN: `bench-admin-${randomBytes(16).toString('hex')}`,
        LOG_LEVEL: 'error',
      };
      try {
        for (const leases of [false, true]) {
          const restartRedis = own ? aofRestarts(own) : cluster ? clusterRestarts(cluster) : undefined;
          const sys = await MoneySystem.start(vars, { leases, restartRedis });
          try {
            const r = await runMode(sys, topology, Math.ceil(steps / 2), maxCommands);
            results.push(r);
            console.log(
              `money model on ${topology} Redis, admission ${r.admission}: ${r.steps} steps in ${r.sequences} sequences, ${r.discrepancies} discrepancies, ${r.stepsPerSecond} steps/s (${r.seconds} s)`,
            );
            if (r.firstDiscrepancy) console.log(`  first discrepancy: ${r.firstDiscrepancy}`);
          } finally {
            await sys.loseRedis(); // the bench's keys go (its prefix only)
            await sys.close();
          }
        }
      } finally {
        await cluster?.stop();
        await own?.stop();
      }
    }
  } finally {
    await database.drop();
  }
  const total = (t: string) => results.filter((r) => r.topology === t).reduce((n, r) => n + r.steps, 0);
  const discrepancies = results.reduce((n, r) => n + r.discrepancies, 0);
  for (const t of topologies) console.log(`  ${t}: ${total(t)} steps in all`);
  console.log(JSON.stringify({ bench: 'money-model', stepsPerTopology: steps, maxCommands, discrepancies, results }));
  if (discrepancies > 0) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
