import { randomUUID } from 'node:crypto';
import { Micros } from '@tollgate/kernel';
import type { UsageEventPayload } from '@tollgate/queue';

export interface UsageEvent {
  id: string;
  orgId: string;
  teamId: string;
  userId: string;
  keyId: string;
  upstreamId: string;
  toolName: string;
  outcome: 'OK' | 'TOOL_ERROR' | 'UPSTREAM_ERROR';
  costMicros: Micros;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  priceRuleId: string | null;
  occurredAt: Date;
}

/** A fresh idempotency key for one governed call: ledger row id, job id and reservation id. */
export function newCallId(): string {
  return randomUUID();
}

export function toPayload(e: UsageEvent): UsageEventPayload {
  return { ...e, costMicros: e.costMicros.toString(), occurredAt: e.occurredAt.toISOString() };
}

export function fromPayload(p: UsageEventPayload): UsageEvent {
  return { ...p, costMicros: BigInt(p.costMicros), occurredAt: new Date(p.occurredAt) };
}
