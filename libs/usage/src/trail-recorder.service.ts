import { randomBytes } from 'node:crypto';
import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { usageOutboxKeys } from './outbox-streams';
import { RedisService, shardOf } from '@tollgate/redis';
import { scrubSecrets, TrailMode } from '@tollgate/kernel';
import { DEFAULT_TRAIL_MODE, TrailEvent, trailEntryOfJson, trailStepJson } from './trail-event';

/** Who took a step: the caller's identity and its organisation's trail setting. */
export interface TrailSubject {
  orgId: string;
  teamId: string;
  userId: string;
  keyId: string;
  /** The organisation's setting; absent: DEFAULT_TRAIL_MODE. */
  trailMode?: TrailMode;
}

/** One step as the edge knows it when it answers; `content` is built only when the org keeps it. */
export type TrailStep = Omit<TrailEvent, 'id' | 'orgId' | 'teamId' | 'userId' | 'keyId' | 'content' | 'occurredAt'> & {
  content?: () => Record<string, unknown>;
};

// A sortable id, unique across edges: milliseconds, a counter, then this process's random tag.
const ID_RANDOM = randomBytes(6).toString('hex');
let idCounter = 0;
function trailId(now: number): string {
  idCounter = (idCounter + 1) % 1_000_000;
  return `${now.toString().padStart(14, '0')}-${idCounter.toString().padStart(6, '0')}-${ID_RANDOM}`;
}

/** Steps wait at most this long on the edge before they go out together (one XADD per shard). */
export const TRAIL_FLUSH_MS = 50;
/** ...or until this many wait for one shard. */
export const TRAIL_FLUSH_STEPS = 200;

/**
 * Records an agent's trail in the usage outbox (the stream of the organisation's shard, entries with
 * TRAIL_ENTRY_FIELD), which the worker drains into "TrailEvent" in its batches. Never awaited by the
 * call: steps gather for up to TRAIL_FLUSH_MS (or TRAIL_FLUSH_STEPS) and go out as one XADD per
 * shard on the shared auto-pipelined connection, so a call pays for building its step, not for a
 * Redis command (one XADD per step cost the edge about 10 % more CPU per call in bench:overhead).
 * What is lost: the steps of the last moment of an edge killed without a drain (shutdown flushes),
 * and steps Redis did not take; none of them charged anything. Content (arguments, answers,
 * script text) is built, and scrubbed of secrets, only in FULL mode.
 */
@Injectable()
export class TrailRecorder implements BeforeApplicationShutdown {
  private readonly logger = new Logger(TrailRecorder.name);
  private lastFailureLogAt = 0;
  // Steps waiting to go out, per shard, already as JSON: one string each is all the heap keeps of a
  // step for those milliseconds, not its object tree.
  private readonly waiting = new Map<number, string[]>();
  private flushTimer: NodeJS.Timeout | null = null;

  constructor(private readonly redis: RedisService) {}

  /** Whether the subject's organisation keeps a trail at all. */
  keeps(subject: TrailSubject): boolean {
    return (subject.trailMode ?? DEFAULT_TRAIL_MODE) !== 'OFF';
  }

  /** Whether it keeps content too (FULL): a step's `content` is only ever called for such an org. */
  keepsContent(subject: TrailSubject): boolean {
    return (subject.trailMode ?? DEFAULT_TRAIL_MODE) === 'FULL';
  }

  record(subject: TrailSubject, step: TrailStep, now = Date.now()): void {
    const mode = subject.trailMode ?? DEFAULT_TRAIL_MODE;
    if (mode === 'OFF') return;
    // Built once, in its payload form, and serialised as it is (no rest copy of the step, no payload
    // copy of the event, no Date): a step is recorded on every call, so what it allocates is paid on
    // every call.
    const json = trailStepJson({
      id: trailId(now),
      orgId: subject.orgId,
      teamId: subject.teamId,
      userId: subject.userId,
      keyId: subject.keyId,
      sessionId: step.sessionId,
      kind: step.kind,
      name: step.name,
      catalogVersion: step.catalogVersion,
      tokens: step.tokens,
      ok: step.ok,
      code: step.code,
      callId: step.callId,
      costMicros: step.costMicros,
      detail: step.detail,
      content: mode === 'FULL' && step.content ? (scrubSecrets(step.content()) as Record<string, unknown>) : null,
      occurredAt: new Date(now).toISOString(),
    });
    const shard = shardOf(subject.orgId);
    const list = this.waiting.get(shard);
    if (list) list.push(json);
    else this.waiting.set(shard, [json]);
    if ((list?.length ?? 1) >= TRAIL_FLUSH_STEPS) this.send(shard);
    else this.flushTimer ??= setTimeout(() => this.flush(), TRAIL_FLUSH_MS).unref();
  }

  /** Sends every waiting step now (the timer does it; shutdown does it last). */
  flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    for (const shard of [...this.waiting.keys()]) this.send(shard);
  }

  beforeApplicationShutdown(): void {
    this.flush();
  }

  private send(shard: number): void {
    const steps = this.waiting.get(shard);
    this.waiting.delete(shard);
    if (!steps?.length) return;
    const stream = usageOutboxKeys(this.redis.prefix, shard).events;
    const [field, value] = trailEntryOfJson(steps);
    this.redis.client.xadd(stream, '*', field, value).catch((err: Error) => {
      const at = Date.now();
      if (at - this.lastFailureLogAt < 1_000) return;
      this.lastFailureLogAt = at;
      this.logger.warn(`${steps.length} trail steps not recorded (Redis: ${err.message})`);
    });
  }
}
