import { Injectable } from '@nestjs/common';
import { luaScript, readLuaFile, RedisService, replyArray, ScriptCodec } from '@tollgate/redis';

/** How long a task's record answers "expired" after its expiry, before it is unknown. */
const EXPIRED_RECORD_KEPT_MS = 3_600_000;

/**
 * A task the edge relays: which key made it (only that key may poll it), which upstream runs it
 * under which id, when it expires, and what settling it needs. Kept in Redis, so any edge answers
 * its polls and settles it, whichever edge created it (and whether that edge still runs).
 */
export interface TaskRecord {
  taskId: string;
  orgId: string;
  keyId: string;
  upstreamId: string;
  upstreamTaskId: string;
  createdAt: string;
  ttlMs: number;
  expiresAt: number;
  pollIntervalMs?: number;
  /** `open` until settled; `expired` when it outlived its ttl before it ended. */
  state: 'open' | 'settled' | 'expired';
  /** The edge's own (opaque here): the call, its price and its reservation. */
  settlement: string;
  /** Once settled: what every later poll answers (status, result or error), as JSON. */
  final?: string;
}

/** A task whose expiry came, as the expiry index names it. */
export interface DueTask {
  orgId: string;
  taskId: string;
}

const CLAIM_DUE_TASKS: ScriptCodec<{ indexKey: string; now: number; until: number; limit: number }, DueTask[]> = {
  script: luaScript('claim-due-tasks', readLuaFile(__dirname, 'claim-due-tasks.lua')),
  encode: (i) => ({ keys: [i.indexKey], args: [i.now, i.until, i.limit] }),
  decode: (reply) =>
    replyArray(reply).map((m) => {
      const [orgId, taskId] = String(m).split('|');
      return { orgId, taskId };
    }),
};

/**
 * Task records in Redis: one hash per task under its organisation's shard tag, an index of
 * expiries (one sorted set for the deployment), and a short claim per settlement so a task is
 * settled by one edge at a time, once.
 */
@Injectable()
export class TaskStore {
  constructor(private readonly redis: RedisService) {}

  private recordKey(orgId: string, taskId: string): string {
    return this.redis.orgKey(orgId, 'task', taskId);
  }

  private get indexKey(): string {
    return this.redis.key('tasks', 'expiring');
  }

  /** Records a new task, and schedules its expiry. */
  async open(record: TaskRecord): Promise<void> {
    const key = this.recordKey(record.orgId, record.taskId);
    const fields: Record<string, string> = {
      keyId: record.keyId,
      upstreamId: record.upstreamId,
      upstreamTaskId: record.upstreamTaskId,
      createdAt: record.createdAt,
      ttlMs: String(record.ttlMs),
      expiresAt: String(record.expiresAt),
      state: record.state,
      settlement: record.settlement,
      ...(record.pollIntervalMs !== undefined ? { pollIntervalMs: String(record.pollIntervalMs) } : {}),
    };
    await this.redis.client
      .multi()
      .hset(key, fields)
      .pexpireat(key, record.expiresAt + EXPIRED_RECORD_KEPT_MS)
      .exec();
    await this.redis.client.zadd(this.indexKey, record.expiresAt, `${record.orgId}|${record.taskId}`);
  }

  /** The task, if `keyId` made it; another key's task is not found (its existence is not disclosed). */
  async find(orgId: string, keyId: string, taskId: string): Promise<TaskRecord | null> {
    const record = await this.read(orgId, taskId);
    return record && record.keyId === keyId ? record : null;
  }

  /** The task whatever key made it (for its expiry). */
  async read(orgId: string, taskId: string): Promise<TaskRecord | null> {
    const h = await this.redis.client.hgetall(this.recordKey(orgId, taskId));
    if (!h.keyId) return null;
    return {
      taskId,
      orgId,
      keyId: h.keyId,
      upstreamId: h.upstreamId,
      upstreamTaskId: h.upstreamTaskId,
      createdAt: h.createdAt,
      ttlMs: Number(h.ttlMs),
      expiresAt: Number(h.expiresAt),
      ...(h.pollIntervalMs ? { pollIntervalMs: Number(h.pollIntervalMs) } : {}),
      state: h.state as TaskRecord['state'],
      settlement: h.settlement,
      ...(h.final ? { final: h.final } : {}),
    };
  }

  /**
   * Claims the settlement of a task for `ms`: for one caller at a time, none once it is settled
   * (null). The claim lapses if its edge dies before `settled`, so another edge can finish:
   * `retaken` then says an earlier claim may have charged it already.
   */
  async claimSettlement(orgId: string, taskId: string, ms: number): Promise<{ retaken: boolean } | null> {
    const key = this.recordKey(orgId, taskId);
    const ok = await this.redis.client.set(key + ':settling', '1', 'PX', ms, 'NX');
    if (ok !== 'OK') return null;
    const state = await this.redis.client.hget(key, 'state');
    if (state === 'open') return { retaken: (await this.redis.client.hincrby(key, 'claims', 1)) > 1 };
    await this.releaseClaim(orgId, taskId);
    return null;
  }

  async releaseClaim(orgId: string, taskId: string): Promise<void> {
    await this.redis.client.del(this.recordKey(orgId, taskId) + ':settling');
  }

  /** Marks a task settled (or expired) with what later polls answer, and drops its expiry. */
  async settled(orgId: string, taskId: string, state: 'settled' | 'expired', final: unknown): Promise<void> {
    await this.redis.client.hset(this.recordKey(orgId, taskId), { state, final: JSON.stringify(final) });
    await this.redis.client.zrem(this.indexKey, `${orgId}|${taskId}`);
    await this.releaseClaim(orgId, taskId);
  }

  /** Claims up to `limit` tasks whose expiry has come, for `claimMs` (see claim-due-tasks.lua). */
  claimDue(now: number, limit: number, claimMs: number): Promise<DueTask[]> {
    return this.redis.run(CLAIM_DUE_TASKS, { indexKey: this.indexKey, now, until: now + claimMs, limit });
  }

  /** Drops a task from the expiry index (its record is gone or it is settled). */
  async forgetExpiry(task: DueTask): Promise<void> {
    await this.redis.client.zrem(this.indexKey, `${task.orgId}|${task.taskId}`);
  }
}

/** JSON that keeps bigints (money in micro-units) and dates exact: `{"$bigint":"123"}`, `{"$date":"..."}`. */
export function stringifyWithBigInts(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, k: string, v: unknown) {
    const raw = this[k];
    if (raw instanceof Date) return { $date: raw.toISOString() };
    return typeof v === 'bigint' ? { $bigint: v.toString() } : v;
  });
}

export function parseWithBigInts<T>(text: string): T {
  return JSON.parse(text, (_k, v: unknown) => {
    if (typeof v !== 'object' || v === null) return v;
    const o = v as { $bigint?: unknown; $date?: unknown };
    if (typeof o.$bigint === 'string') return BigInt(o.$bigint);
    if (typeof o.$date === 'string') return new Date(o.$date);
    return v;
  }) as T;
}
