import { performance } from 'node:perf_hooks';
import { exists as knownRedisCommand, hasFlag } from '@ioredis/commands';
import type { Pool, PoolClient } from 'pg';
import { Histogram, Registry } from 'prom-client';

/** What of an ioredis command the Redis histogram reads (an ioredis `Command`). */
interface RedisCommandLike {
  name: string;
  args: unknown[];
  promise: Promise<unknown>;
}

/** An ioredis client (`Redis` or `Cluster`): every command goes through its `sendCommand`. */
interface RedisClientLike {
  sendCommand(command: RedisCommandLike, ...rest: unknown[]): unknown;
}

/** Client-side latency buckets (seconds): sub-millisecond Redis up to slow Postgres reports. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

const SCRIPT_COMMANDS = new Set(['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro']);
const TRANSACTION_COMMANDS = new Set(['multi', 'exec', 'discard', 'watch', 'unwatch']);
const SQL_OPERATIONS = new Set(['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'WITH', 'BEGIN', 'COMMIT', 'ROLLBACK']);

/**
 * Redis and Postgres latency as the app's clients see it (from sending a command or query to its
 * answer, queueing in the client included), as Prometheus histograms with few label values:
 * `tollgate_redis_command_duration_seconds{family, outcome}` (family: script, read, write, stream,
 * pubsub, transaction, other) and `tollgate_postgres_query_duration_seconds{operation, outcome}`
 * (the statement's first keyword: SELECT, INSERT, UPDATE, DELETE, WITH, BEGIN, COMMIT, ROLLBACK,
 * OTHER). Blocking commands (XREADGROUP ... BLOCK, BZPOPMIN...) are left out: their time is waiting
 * for work, not latency.
 */
export class ClientLatencyMetrics {
  private readonly redis: Histogram<'family' | 'outcome'>;
  private readonly postgres: Histogram<'operation' | 'outcome'>;
  /** Commands already timed: Redis Cluster sends a redirected command again. */
  private readonly timed = new WeakSet<RedisCommandLike>();

  constructor(registry: Registry) {
    this.redis = new Histogram({
      name: 'tollgate_redis_command_duration_seconds',
      help: 'Redis command latency seen by this process (send to answer), by command family and outcome',
      labelNames: ['family', 'outcome'],
      buckets: BUCKETS,
      registers: [registry],
    });
    this.postgres = new Histogram({
      name: 'tollgate_postgres_query_duration_seconds',
      help: 'Postgres query latency seen by this process (send to answer), by SQL operation and outcome',
      labelNames: ['operation', 'outcome'],
      buckets: BUCKETS,
      registers: [registry],
    });
  }

  /**
   * Times the app's Redis client and Postgres pools (each pool once). Call it while the app is
   * built, before the pools connect (providers are made before any module's init hook runs).
   */
  watch(redis: RedisClientLike, pools: Pool[]): this {
    this.watchRedis(redis);
    for (const pool of new Set(pools)) this.watchPostgres(pool);
    return this;
  }

  /** Times every command `client` sends from now on (its own `sendCommand`, not its duplicates'). */
  watchRedis(client: RedisClientLike): void {
    const send = client.sendCommand.bind(client);
    client.sendCommand = (command: RedisCommandLike, ...rest: unknown[]) => {
      if (!this.timed.has(command)) {
        const family = redisFamily(command);
        if (family !== null) {
          this.timed.add(command);
          const started = performance.now();
          const observe = (outcome: string) =>
            this.redis.observe({ family, outcome }, (performance.now() - started) / 1000);
          command.promise.then(
            () => observe('ok'),
            () => observe('error'),
          );
        }
      }
      return send(command, ...rest);
    };
  }

  /** Times every query of the pool's connections (Prisma's and the raw ones alike), made from now on. */
  watchPostgres(pool: Pool): void {
    pool.on('connect', (client) => this.watchPostgresClient(client));
  }

  private watchPostgresClient(client: PoolClient): void {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const operation = sqlOperation(args[0]);
      const started = performance.now();
      const observe = (outcome: string) =>
        this.postgres.observe({ operation, outcome }, (performance.now() - started) / 1000);
      const last = args.length - 1;
      if (typeof args[last] === 'function') {
        const callback = args[last] as (err: unknown, ...rest: unknown[]) => void;
        args[last] = (err: unknown, ...rest: unknown[]) => {
          observe(err ? 'error' : 'ok');
          callback(err, ...rest);
        };
        return query(...args);
      }
      const result = query(...args);
      if (result instanceof Promise)
        result.then(
          () => observe('ok'),
          () => observe('error'),
        );
      return result;
    };
  }
}

/** The command's family, or null for a blocking one (not timed). */
export function redisFamily(command: { name: string; args: unknown[] }): string | null {
  const name = command.name.toLowerCase();
  if (name === 'xreadgroup' || name === 'xread') {
    return command.args.some((a) => String(a).toUpperCase() === 'BLOCK') ? null : 'stream';
  }
  if (SCRIPT_COMMANDS.has(name)) return 'script';
  if (TRANSACTION_COMMANDS.has(name)) return 'transaction';
  if (!knownRedisCommand(name)) return 'other';
  if (hasFlag(name, 'blocking')) return null;
  if (name.startsWith('x')) return 'stream';
  if (hasFlag(name, 'pubsub')) return 'pubsub';
  if (hasFlag(name, 'readonly')) return 'read';
  if (hasFlag(name, 'write')) return 'write';
  return 'other';
}

/** The first SQL keyword of a query (text or `{ text }`), one of SQL_OPERATIONS, else OTHER. */
export function sqlOperation(query: unknown): string {
  const text = typeof query === 'string' ? query : (query as { text?: unknown } | null)?.text;
  if (typeof text !== 'string') return 'OTHER';
  const keyword = /^\s*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() ?? '';
  return SQL_OPERATIONS.has(keyword) ? keyword : 'OTHER';
}
