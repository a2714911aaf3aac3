import type { JobsOptions } from 'bullmq';

/** Queue names are part of the data in Redis: never change a value. */
export enum QueueName {
  CatalogSync = 'catalog-sync',
  UsageLedger = 'usage-ledger',
  UsageRollup = 'usage-rollup',
  BudgetAlerts = 'budget-alerts',
  AlertDelivery = 'alert-delivery',
  BudgetReconcile = 'budget-reconcile',
  OAuthRefresh = 'oauth-refresh',
  TierScores = 'tier-scores',
}

export enum JobName {
  SyncUpstream = 'sync-upstream',
  RecordUsage = 'record-usage',
  RollupUsage = 'rollup-usage',
  CheckBudgetAlerts = 'check-budget-alerts',
  DeliverBudgetAlert = 'deliver-budget-alert',
  ReconcileBudgets = 'reconcile-budgets',
  RefreshConnections = 'refresh-connections',
  ComputeTierScores = 'compute-tier-scores',
}

/** Why a catalog sync runs; kept in the job for the logs and the admin API. */
export type SyncTrigger = 'schedule' | 'admin' | 'list-changed' | 'created' | 'user-connected';

/** A usage event as it travels through the usage outbox (and legacy jobs): money as a decimal string of micro-units. */
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
  /**
   * The call's W3C trace context (`traceparent`), so the worker's ledger write joins the call's
   * trace and the ledger row keeps its trace id. Absent (entries written before it) or null: none.
   */
  traceparent?: string | null;
}

/**
 * Legacy: usage events queued together in one job, as edges did before the usage outbox. Only the
 * worker still reads these, to drain jobs left in the queue across an upgrade.
 */
export interface UsageBatchPayload {
  events: UsageEventPayload[];
}

/** The payload of each job follows from its name. */
export interface JobPayloads {
  [JobName.SyncUpstream]: { orgId: string; upstreamId: string; trigger: SyncTrigger };
  [JobName.RecordUsage]: UsageBatchPayload;
  /** `day` (UTC, YYYY-MM-DD) null: today and yesterday; `orgId` null: every organisation. */
  [JobName.RollupUsage]: { day: string | null; orgId: string | null };
  /** `orgId` null: every organisation with budgets. */
  [JobName.CheckBudgetAlerts]: { orgId: string | null };
  [JobName.DeliverBudgetAlert]: { orgId: string; alertId: string };
  /**
   * `orgId` null: every organisation with budgets. `repair`: set drifted counters back to the
   * ledger (absent: yes, as the schedule does; an admin's request says).
   */
  [JobName.ReconcileBudgets]: { orgId: string | null; repair?: boolean };
  /** Refresh per-user OAuth tokens expiring within `withinSeconds` (null: the worker's setting). */
  [JobName.RefreshConnections]: { withinSeconds: number | null };
  /** `orgId` null: every organisation with tools. */
  [JobName.ComputeTierScores]: { orgId: string | null };
}

export type JobOf<N extends JobName> = JobPayloads[N];

/** Which queue carries which job. */
export const JOB_QUEUE: Record<JobName, QueueName> = {
  [JobName.SyncUpstream]: QueueName.CatalogSync,
  [JobName.RecordUsage]: QueueName.UsageLedger,
  [JobName.RollupUsage]: QueueName.UsageRollup,
  [JobName.CheckBudgetAlerts]: QueueName.BudgetAlerts,
  [JobName.DeliverBudgetAlert]: QueueName.AlertDelivery,
  [JobName.ReconcileBudgets]: QueueName.BudgetReconcile,
  [JobName.RefreshConnections]: QueueName.OAuthRefresh,
  [JobName.ComputeTierScores]: QueueName.TierScores,
};

/** How many finished jobs Redis keeps for inspection; the ledger and alert jobs keep more. */
const KEEP_SOME = { removeOnComplete: 100, removeOnFail: 500 } as const;
const KEEP_MANY = { removeOnComplete: 1000, removeOnFail: 5000 } as const;

/** `attempts` tries in all, waiting `delayMs`, then twice that, and so on between them. */
function exponentialRetry(attempts: number, delayMs: number, keep: JobsOptions = KEEP_SOME): JobsOptions {
  return { attempts, backoff: { type: 'exponential', delay: delayMs }, ...keep };
}

/** Retry policy lives next to the names. */
export const JOB_OPTIONS: Record<JobName, JobsOptions> = {
  [JobName.SyncUpstream]: exponentialRetry(3, 2000),
  [JobName.RecordUsage]: exponentialRetry(10, 500, KEEP_MANY),
  // Recomputing a day is idempotent, so a retry is always safe.
  [JobName.RollupUsage]: exponentialRetry(5, 1000),
  // The 30 s schedule is the backstop, so a failed check needs only a couple of quick retries.
  [JobName.CheckBudgetAlerts]: exponentialRetry(3, 500),
  // A webhook receiver may be down for a while: 8 attempts over about 4 minutes (1 s, 2 s, 4 s ... 64 s).
  [JobName.DeliverBudgetAlert]: exponentialRetry(8, 1000, KEEP_MANY),
  [JobName.ReconcileBudgets]: exponentialRetry(3, 1000),
  // The schedule runs every minute: a failed pass is simply redone by the next one.
  [JobName.RefreshConnections]: { attempts: 1, ...KEEP_SOME },
  // Recomputing scores is idempotent (one UPDATE from the rollups), so a retry is always safe.
  [JobName.ComputeTierScores]: exponentialRetry(3, 1000),
};
