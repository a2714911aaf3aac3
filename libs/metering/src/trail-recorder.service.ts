import { randomBytes } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { usageOutboxKeys } from '@tollgate/queue';
import { RedisService, shardOf } from '@tollgate/redis';
import { scrubSecrets, TrailMode } from '@tollgate/kernel';
import { DEFAULT_TRAIL_MODE, TrailEvent, trailEntryFields } from './trail-event';

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

// A process-unique, sortable id: milliseconds, a counter, then random bytes (unique across edges).
const ID_RANDOM = randomBytes(4).toString('hex');
let idCounter = 0;
function trailId(now: number): string {
  idCounter = (idCounter + 1) % 1_000_000;
  return `${now.toString().padStart(14, '0')}-${idCounter.toString().padStart(6, '0')}-${ID_RANDOM}${randomBytes(2).toString('hex')}`;
}

/**
 * Records an agent's trail in the usage outbox (the stream of the organisation's shard, an entry with
 * TRAIL_ENTRY_FIELD), which the worker drains into "TrailEvent" in its batches. Fire and forget, like
 * refusals: the XADD goes on the shared auto-pipelined connection with what the turn already sends,
 * and the answer does not wait for it. A step Redis did not take is lost (it charged nothing).
 * Content (arguments, answers, script text) is built, and scrubbed of secrets, only in FULL mode.
 */
@Injectable()
export class TrailRecorder {
  private readonly logger = new Logger(TrailRecorder.name);
  private lastFailureLogAt = 0;

  constructor(private readonly redis: RedisService) {}

  /** Whether the subject's organisation keeps a trail at all. */
  keeps(subject: TrailSubject): boolean {
    return (subject.trailMode ?? DEFAULT_TRAIL_MODE) !== 'OFF';
  }

  record(subject: TrailSubject, step: TrailStep, now = Date.now()): void {
    const mode = subject.trailMode ?? DEFAULT_TRAIL_MODE;
    if (mode === 'OFF') return;
    const { content, ...rest } = step;
    const event: TrailEvent = {
      ...rest,
      id: trailId(now),
      orgId: subject.orgId,
      teamId: subject.teamId,
      userId: subject.userId,
      keyId: subject.keyId,
      content: mode === 'FULL' && content ? (scrubSecrets(content()) as Record<string, unknown>) : null,
      occurredAt: new Date(now),
    };
    const stream = usageOutboxKeys(this.redis.prefix, shardOf(event.orgId)).events;
    const [field, value] = trailEntryFields(event);
    this.redis.client.xadd(stream, '*', field, value).catch((err: Error) => {
      const at = Date.now();
      if (at - this.lastFailureLogAt < 1_000) return;
      this.lastFailureLogAt = at;
      this.logger.warn(`trail step not recorded (Redis: ${err.message})`);
    });
  }
}
