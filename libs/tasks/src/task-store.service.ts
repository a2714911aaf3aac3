import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
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
  /** The 2025-11-25 session that created it, told its status when it ends (`notifications/tasks/status`). */
  sessionId?: string;
  /**
   * The edge (`TaskStore.edgeId`) whose upstream MCP session created the task, for a 2025-11-25
   * upstream: its input requests come only on that session's `tasks/result`, so only that edge
   * can hold them (TaskInputHold).
   */
  heldBy?: string;
}

/** A request an upstream's task made of the client (elicitation, sampling, roots), awaiting its answer. */
export interface TaskInputRequest {
  method: string;
  params?: Record<string, unknown>;
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

const CLAIM_SETTLEMENT: ScriptCodec<{ recordKey: string; ms: number }, { retaken: boolean } | null> = {
  script: luaScript('claim-settlement', readLuaFile(__dirname, 'claim-settlement.lua')),
  encode: (i) => ({ keys: [i.recordKey, i.recordKey + ':settling'], args: [i.ms] }),
  decode: (reply) => (Number(reply) < 0 ? null : { retaken: Number(reply) === 1 }),
};

/**
 * Task records in Redis: one hash per task under its organisation's shard tag, an index of
 * expiries (one sorted set for the deployment), and a short claim per settlement so a task is
 * settled by one edge at a time, once.
 */
@Injectable()
export class TaskStore {
  /** This process's name among the edges (what a task's `heldBy` names). */
  readonly edgeId = randomBytes(6).toString('hex');

  constructor(private readonly redis: RedisService) {}

  private recordKey(orgId: string, taskId: string): string {
    return this.redis.orgKey(orgId, 'task', taskId);
  }

  // The key's tasks, newest first (tasks/list): under the org's shard tag, beside the records.
  private keyIndexKey(orgId: string, keyId: string): string {
    return this.redis.orgKey(orgId, 'key', keyId, 'tasks');
  }

  // The input requests a held task is waiting on, by key (TaskInputHold).
  private inputKey(orgId: string, taskId: string): string {
    return this.redis.orgKey(orgId, 'task', taskId, 'input');
  }

  private get indexKey(): string {
    return this.redis.key('tasks', 'expiring');
  }

  /**
   * Records a new task, and schedules its expiry; a task recorded already ended (`settled`, with
   * what its polls answer) has no expiry to schedule, only its record's life.
   */
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
      ...(record.final !== undefined ? { final: record.final } : {}),
      ...(record.heldBy !== undefined ? { heldBy: record.heldBy } : {}),
    };
    const forgottenAt = record.expiresAt + EXPIRED_RECORD_KEPT_MS;
    const keyIndex = this.keyIndexKey(record.orgId, record.keyId);
    await this.redis.client
      .multi()
      .hset(key, fields)
      .pexpireat(key, forgottenAt)
      // Ordered by when the edge took it on (the upstreams' clocks may differ).
      .zadd(keyIndex, record.expiresAt - record.ttlMs, record.taskId)
      // The index lives as long as its longest-lived task: set if it had no expiry, else only pushed later.
      .pexpireat(keyIndex, forgottenAt, 'NX')
      .pexpireat(keyIndex, forgottenAt, 'GT')
      .exec();
    if (record.state === 'open')
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
      ...(h.sessionId ? { sessionId: h.sessionId } : {}),
      ...(h.heldBy ? { heldBy: h.heldBy } : {}),
    };
  }

  /** Keeps a request the task's upstream made, under `key` (stable: every poll inlines it under it). */
  async addInputRequest(record: TaskRecord, key: string, request: TaskInputRequest): Promise<void> {
    const inputKey = this.inputKey(record.orgId, record.taskId);
    await this.redis.client
      .multi()
      .hset(inputKey, key, JSON.stringify(request))
      .pexpireat(inputKey, record.expiresAt + EXPIRED_RECORD_KEPT_MS)
      .exec();
  }

  /** The requests the task is waiting on, by key. */
  async inputRequests(orgId: string, taskId: string): Promise<Record<string, TaskInputRequest>> {
    const h = await this.redis.client.hgetall(this.inputKey(orgId, taskId));
    return Object.fromEntries(Object.entries(h).map(([k, v]) => [k, JSON.parse(v) as TaskInputRequest]));
  }

  /** One pending request, without taking it. */
  async inputRequest(orgId: string, taskId: string, key: string): Promise<TaskInputRequest | null> {
    const raw = await this.redis.client.hget(this.inputKey(orgId, taskId), key);
    return raw ? (JSON.parse(raw) as TaskInputRequest) : null;
  }

  /** Takes a pending request off the task, for its answer: true for one caller only. */
  async takeInputRequest(orgId: string, taskId: string, key: string): Promise<boolean> {
    return (await this.redis.client.hdel(this.inputKey(orgId, taskId), key)) === 1;
  }

  /** Drops what the task was waiting on (it ended, or the session that asked is gone). */
  async clearInputRequests(orgId: string, taskId: string): Promise<void> {
    await this.redis.client.del(this.inputKey(orgId, taskId));
  }

  /** Notes the 2025-11-25 session that created the task (its status notifications go there). */
  async bindSession(orgId: string, taskId: string, sessionId: string): Promise<void> {
    await this.redis.client.hset(this.recordKey(orgId, taskId), 'sessionId', sessionId);
  }

  /**
   * The key's tasks, newest first, `limit` from `offset` (tasks past their record's life are
   * dropped from the index as they are met), and whether more follow.
   */
  async listForKey(
    orgId: string,
    keyId: string,
    offset: number,
    limit: number,
  ): Promise<{ records: TaskRecord[]; more: boolean }> {
    const keyIndex = this.keyIndexKey(orgId, keyId);
    const ids = await this.redis.client.zrevrange(keyIndex, offset, offset + limit);
    const records: TaskRecord[] = [];
    for (const taskId of ids.slice(0, limit)) {
      const record = await this.find(orgId, keyId, taskId);
      if (record) records.push(record);
      else await this.redis.client.zrem(keyIndex, taskId);
    }
    return { records, more: ids.length > limit };
  }

  /**
   * Claims the settlement of a task for `ms`: for one caller at a time, none once it is settled
   * (null). The claim lapses if its edge dies before `settled`, so another edge can finish:
   * `retaken` then says an earlier claim may have charged it already.
   */
  claimSettlement(orgId: string, taskId: string, ms: number): Promise<{ retaken: boolean } | null> {
    return this.redis.run(CLAIM_SETTLEMENT, { recordKey: this.recordKey(orgId, taskId), ms });
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
