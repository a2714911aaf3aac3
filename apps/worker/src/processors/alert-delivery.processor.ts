import { Processor } from '@nestjs/bullmq';
import { Logger } from '@nestjs/common';
import { JobName, JobOf, QueueName, LoggedWorkerHost } from '@tollgate/queue';
import { AlertDeliveryError, AlertDeliveryService, DeliveryOutcome } from '@tollgate/reporting';
import { Job, UnrecoverableError } from 'bullmq';

/** Sends one alert to its org's webhooks; a failed attempt is retried with backoff (jobOptions, ALERT_RETRY_DELAY_MS). */
@Processor(QueueName.AlertDelivery, { concurrency: 8 })
export class AlertDeliveryProcessor extends LoggedWorkerHost {
  private readonly logger = new Logger(AlertDeliveryProcessor.name);

  constructor(private readonly delivery: AlertDeliveryService) {
    super();
  }

  async process(job: Job<JobOf<JobName.DeliverBudgetAlert>>): Promise<DeliveryOutcome> {
    if (job.name !== JobName.DeliverBudgetAlert)
      throw new UnrecoverableError(`unknown job ${job.name} on ${QueueName.AlertDelivery}`);
    const { orgId, alertId } = job.data;
    try {
      const outcome = await this.delivery.deliverAlert(orgId, alertId);
      if (outcome === 'alert-gone')
        this.logger.warn(`discarding delivery of alert ${alertId}: it no longer exists (budget or org deleted)`);
      return outcome;
    } catch (err) {
      if (err instanceof AlertDeliveryError && job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) {
        this.logger.warn(`giving up on alert ${alertId} after ${job.attemptsMade + 1} attempt(s): ${err.message}`);
      }
      throw err;
    }
  }
}
