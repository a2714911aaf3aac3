import type { JobsOptions } from 'bullmq';

/** Queue names are part of the data in Redis: never change a value. */
export enum QueueName {
  CatalogSync = 'catalog-sync',
  UsageLedger = 'usage-ledger',
}

export enum JobName {
  SyncUpstream = 'sync-upstream',
  RecordUsage = 'record-usage',
}

/** Why a catalog sync runs; kept in the job for the logs and the admin API. */
export type SyncTrigger = 'schedule' | 'admin' | 'list-changed' | 'created';

/** A usage event as it travels through the queue: money as a decimal string of micro-units. */
export interface UsageEventPayload {
  id: string;
  orgId: string;
  teamId: string;
  userId: string;
  keyId: string;
  upstreamId: string;
  toolName: string;
  outcome: 'OK' | 'TOOL_ERROR' | 'UPSTREAM_ERROR';
  costMicros: string;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  priceRuleId: string | null;
  occurredAt: string;
}

/** The payload of each job follows from its name. */
export interface JobPayloads {
  [JobName.SyncUpstream]: { orgId: string; upstreamId: string; trigger: SyncTrigger };
  [JobName.RecordUsage]: UsageEventPayload;
}

export type JobOf<N extends JobName> = JobPayloads[N];

/** Which queue carries which job. */
export const JOB_QUEUE: Record<JobName, QueueName> = {
  [JobName.SyncUpstream]: QueueName.CatalogSync,
  [JobName.RecordUsage]: QueueName.UsageLedger,
};

/** Retry policy lives next to the names. */
export const JOB_OPTIONS: Record<JobName, JobsOptions> = {
  [JobName.SyncUpstream]: { attempts: 3, backoff: { type: 'exponential', delay: 2000 }, removeOnComplete: 100, removeOnFail: 500 },
  [JobName.RecordUsage]: { attempts: 10, backoff: { type: 'exponential', delay: 500 }, removeOnComplete: 1000, removeOnFail: 5000 },
};
