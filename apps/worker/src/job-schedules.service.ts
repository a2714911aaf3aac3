import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  CatalogScheduleService,
  TIER_SCORES_SCHEDULER_ID,
  TierScoreJobs,
  UpstreamRegistry,
  upstreamSyncSchedulerId,
} from '@tollgate/upstream-registry';
import { TOLLGATE_CONFIG, WorkerConfig } from '@tollgate/config';
import { JOB_OPTIONS, JobName, JobOf, JobProducer, QueueName } from '@tollgate/queue';
import { FINANCE_SCHEDULERS, FINANCE_SCHEDULES, FinanceJobs } from '@tollgate/reporting';

const OAUTH_REFRESH_SCHEDULER_ID = 'oauth-refresh';

/**
 * The fixed job schedulers, by queue, with the ids their owners upsert them under. Catalog syncs
 * add one per enabled upstream whose sync is not paused (CatalogScheduleService).
 */
const FIXED_SCHEDULERS: [QueueName, string][] = [
  ...FINANCE_SCHEDULERS,
  [QueueName.TierScores, TIER_SCORES_SCHEDULER_ID],
  [QueueName.OAuthRefresh, OAUTH_REFRESH_SCHEDULER_ID],
];

/**
 * Every BullMQ job scheduler the worker owns: finance (rollups, alert sweep, reconcile), tier
 * scores, OAuth refresh, and each enabled upstream's catalog sync. RedisStateWatch upserts them at
 * boot (idempotent: one scheduler each, whatever the number of workers; a changed interval takes
 * effect), and checks and re-creates them later (a Redis that lost its data loses them all).
 */
@Injectable()
export class JobSchedules {
  private readonly logger = new Logger(JobSchedules.name);

  constructor(
    private readonly finance: FinanceJobs,
    private readonly tierScores: TierScoreJobs,
    private readonly upstreams: UpstreamRegistry,
    private readonly catalog: CatalogScheduleService,
    private readonly jobs: JobProducer,
    @Inject(TOLLGATE_CONFIG) private readonly config: WorkerConfig,
  ) {}

  /** Upserts every scheduler and says so. */
  async ensureAllAtBoot(): Promise<void> {
    const syncs = await this.ensureAll();
    this.logger.log(
      `schedules in place: rollups every ${FINANCE_SCHEDULES.rollupEveryMs / 1000} s, alerts every ${FINANCE_SCHEDULES.alertsEveryMs / 1000} s, reconcile every ${FINANCE_SCHEDULES.reconcileEveryMs / 1000} s, tier scores every ${this.config.tierScores.everySeconds} s, oauth-refresh every ${this.config.oauthRefresh.everySeconds} s, catalog syncs of ${syncs} upstream(s)`,
    );
  }

  /** Upserts every scheduler; returns how many upstream syncs are scheduled. */
  async ensureAll(): Promise<number> {
    await this.finance.scheduleRecurring();
    await this.tierScores.scheduleRecurring(this.config.tierScores.everySeconds * 1000);
    const data: JobOf<JobName.RefreshConnections> = { withinSeconds: null };
    await this.jobs
      .queue(QueueName.OAuthRefresh)
      .upsertJobScheduler(
        OAUTH_REFRESH_SCHEDULER_ID,
        { every: this.config.oauthRefresh.everySeconds * 1000 },
        { name: JobName.RefreshConnections, data, opts: JOB_OPTIONS[JobName.RefreshConnections] },
      );
    const upstreams = await this.upstreams.listAllEnabled();
    for (const u of upstreams) await this.catalog.scheduleUpstreamSync(u);
    return upstreams.length;
  }

  /** The schedulers that should exist and do not, as `<queue>/<schedulerId>`. */
  async missing(): Promise<string[]> {
    const expected = [
      ...FIXED_SCHEDULERS,
      ...(await this.upstreams.listAllEnabled()).map((u): [QueueName, string] => [
        QueueName.CatalogSync,
        upstreamSyncSchedulerId(u.id),
      ]),
    ];
    const present = new Map<QueueName, Set<string>>();
    for (const queue of new Set(expected.map(([q]) => q))) {
      present.set(queue, new Set((await this.jobs.queue(queue).getJobSchedulers(0, -1)).map((s) => s.key)));
    }
    return expected.filter(([q, id]) => !present.get(q)!.has(id)).map(([q, id]) => `${q}/${id}`);
  }
}
