import type { JobsOptions } from 'bullmq';

/**
 * Queue names are part of the data in Redis: never change a value. (`usage-ledger` and its
 * `record-usage` jobs, from before the usage outbox, are gone: usage goes through libs/usage.)
 */
export enum QueueName {
  CatalogSync = 'catalog-sync',
  UsageRollup = 'usage-rollup',
  BudgetAlerts = 'budget-alerts',
  AlertDelivery = 'alert-delivery',
  BudgetReconcile = 'budget-reconcile',
  OAuthRefresh = 'oauth-refresh',
  TierScores = 'tier-scores',
}

export enum JobName {
  SyncUpstream = 'sync-upstream',
  RollupUsage = 'rollup-usage',
  RebuildUsageRollups = 'rebuild-usage-rollups',
  CheckBudgetAlerts = 'check-budget-alerts',
  DeliverBudgetAlert = 'deliver-budget-alert',
  ReconcileBudgets = 'reconcile-budgets',
  RefreshConnections = 'refresh-connections',
  ComputeTierScores = 'compute-tier-scores',
}

/** Why a catalog sync runs; kept in the job for the logs and the admin API. */
export type SyncTrigger = 'schedule' | 'admin' | 'list-changed' | 'created' | 'user-connected';

/** The payload of each job follows from its name. */
export interface JobPayloads {
  [JobName.SyncUpstream]: { orgId: string; upstreamId: string; trigger: SyncTrigger };
  /**
   * The ledger's upkeep (partitions, retention, rollups of a changed zone rebuilt, trail retention);
   * `orgId` null: every organisation. A job queued before `day` left it may still carry one: ignored.
   */
  [JobName.RollupUsage]: { orgId: string | null };
  /** An org's rollups rebuilt from the ledger: of one day (YYYY-MM-DD), or all of them (`day` null). */
  [JobName.RebuildUsageRollups]: { orgId: string; day: string | null };
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
  [JobName.RollupUsage]: QueueName.UsageRollup,
  [JobName.RebuildUsageRollups]: QueueName.UsageRollup,
  [JobName.CheckBudgetAlerts]: QueueName.BudgetAlerts,
  [JobName.DeliverBudgetAlert]: QueueName.AlertDelivery,
  [JobName.ReconcileBudgets]: QueueName.BudgetReconcile,
  [JobName.RefreshConnections]: QueueName.OAuthRefresh,
  [JobName.ComputeTierScores]: QueueName.TierScores,
};

/** How many finished jobs Redis keeps for inspection; alert deliveries keep more. */
const KEEP_SOME = { removeOnComplete: 100, removeOnFail: 500 } as const;
const KEEP_MANY = { removeOnComplete: 1000, removeOnFail: 5000 } as const;

/** `attempts` tries in all, waiting `delayMs`, then twice that, and so on between them. */
function exponentialRetry(attempts: number, delayMs: number, keep: JobsOptions = KEEP_SOME): JobsOptions {
  return { attempts, backoff: { type: 'exponential', delay: delayMs }, ...keep };
}

/** The jobs whose first retry waits as long as a setting says (`jobOptions`). */
type RetryDelayedJob = JobName.SyncUpstream | JobName.DeliverBudgetAlert;

/**
 * Every job's retry policy, with the deployment's retry delays (config `jobs`): a catalog sync is
 * tried three times, the first retry after SYNC_RETRY_DELAY_MS, the next after twice that; an alert
 * delivery 8 times, from ALERT_RETRY_DELAY_MS doubling (1 s: 1, 2, 4 ... 64 s, about 4 minutes, for
 * a webhook receiver that is down for a while). Producers build it once.
 */
export function jobOptions(delays: {
  syncRetryDelayMs: number;
  alertRetryDelayMs: number;
}): Record<JobName, JobsOptions> {
  return {
    ...JOB_OPTIONS,
    [JobName.SyncUpstream]: exponentialRetry(3, delays.syncRetryDelayMs),
    [JobName.DeliverBudgetAlert]: exponentialRetry(8, delays.alertRetryDelayMs, KEEP_MANY),
  };
}

/** The policies that follow no setting (those that do: `jobOptions`). */
export const JOB_OPTIONS: Record<Exclude<JobName, RetryDelayedJob>, JobsOptions> = {
  // The upkeep and a rebuild are idempotent, so a retry is always safe.
  [JobName.RollupUsage]: exponentialRetry(5, 1000),
  [JobName.RebuildUsageRollups]: exponentialRetry(5, 1000),
  // The 30 s schedule is the backstop, so a failed check needs only a couple of quick retries.
  [JobName.CheckBudgetAlerts]: exponentialRetry(3, 500),
  [JobName.ReconcileBudgets]: exponentialRetry(3, 1000),
  // The schedule runs every minute: a failed pass is simply redone by the next one.
  [JobName.RefreshConnections]: { attempts: 1, ...KEEP_SOME },
  // Recomputing scores is idempotent (one UPDATE from the rollups), so a retry is always safe.
  [JobName.ComputeTierScores]: exponentialRetry(3, 1000),
};
