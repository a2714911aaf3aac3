import { Injectable, Logger } from '@nestjs/common';
import { AlertWebhook, Budget, BudgetAlert, PrismaService } from '@tollgate/db';
import { outboundExceptionIn, outboundFetch } from '@tollgate/outbound';
import { AlertWebhookService } from './alert-webhook.service';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, signWebhook } from './webhook-signature';

const DELIVERY_TIMEOUT_MS = 10_000;
const MAX_ERROR_LENGTH = 500;

export type DeliveryOutcome = 'delivered' | 'already-delivered' | 'alert-gone' | 'no-webhooks';

/** A delivery attempt that failed at one or more webhooks; the job retries it. */
export class AlertDeliveryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AlertDeliveryError';
  }
}

/** The JSON body POSTed to webhooks; `id` is the alert's id, the same on every retry, for receivers to de-duplicate. */
export interface BudgetAlertWebhookBody {
  id: string;
  type: 'budget.threshold_crossed';
  orgId: string;
  threshold: number;
  spentMicros: number | string;
  periodStart: string;
  createdAt: string;
  budget: { id: string; scope: string; scopeId: string; period: string; mode: string; limitMicros: number | string };
}

export function alertWebhookBody(alert: BudgetAlert, budget: Budget): BudgetAlertWebhookBody {
  return {
    id: alert.id,
    type: 'budget.threshold_crossed',
    orgId: alert.orgId,
    threshold: alert.threshold,
    spentMicros: jsonInt(alert.spentMicros),
    periodStart: alert.periodStart.toISOString(),
    createdAt: alert.createdAt.toISOString(),
    budget: {
      id: budget.id,
      scope: budget.scope,
      scopeId: budget.scopeId,
      period: budget.period,
      mode: budget.mode,
      limitMicros: jsonInt(budget.limitMicros),
    },
  };
}

// Integers beyond 2^53 would lose digits as JSON numbers: send those as strings.
function jsonInt(v: bigint): number | string {
  return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
}

/**
 * POSTs an alert, signed, to every webhook of its org that has not accepted it yet. Each attempt is
 * recorded on the alert (attempts, lastError); deliveredAt is set once every webhook accepted it.
 */
@Injectable()
export class AlertDeliveryService {
  private readonly logger = new Logger(AlertDeliveryService.name);

  constructor(
    private readonly prisma: PrismaService,
    private readonly webhooks: AlertWebhookService,
  ) {}

  async deliverAlert(orgId: string, alertId: string, now = new Date()): Promise<DeliveryOutcome> {
    const alert = await this.prisma.budgetAlert.findFirst({ where: { orgId, id: alertId }, include: { budget: true } });
    if (!alert) return 'alert-gone';
    if (alert.deliveredAt) return 'already-delivered';
    const hooks = await this.webhooks.listWebhooks(orgId);
    if (hooks.length === 0) return 'no-webhooks';
    const pending = hooks.filter((h) => !alert.deliveredWebhookIds.includes(h.id));

    const body = JSON.stringify(alertWebhookBody(alert, alert.budget));
    const timestamp = Math.floor(now.getTime() / 1000);
    const results = await Promise.all(pending.map((h) => this.post(h, alertId, body, timestamp)));
    const accepted = pending.filter((_, i) => results[i] === null).map((h) => h.id);
    const errors = results.filter((r): r is string => r !== null);
    const deliveredWebhookIds = [...alert.deliveredWebhookIds, ...accepted];
    const done = hooks.every((h) => deliveredWebhookIds.includes(h.id));

    await this.prisma.budgetAlert.update({
      where: { id: alert.id },
      data: {
        attempts: { increment: 1 },
        deliveredWebhookIds,
        ...(done ? { deliveredAt: new Date() } : {}),
        ...(errors.length > 0 ? { lastError: errors.join('; ').slice(0, MAX_ERROR_LENGTH) } : {}),
      },
    });
    if (!done) throw new AlertDeliveryError(`alert ${alertId}: ${errors.join('; ')}`);
    return 'delivered';
  }

  /** null when the receiver accepted (2xx), else what went wrong (never the secret or the body). */
  private async post(hook: AlertWebhook, alertId: string, body: string, timestamp: number): Promise<string | null> {
    try {
      // Connects only to addresses the outbound rule allows (checked again at delivery: DNS may have changed).
      const res = await outboundFetch()(hook.url, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': 'Tollgate-Alerts/1',
          [TIMESTAMP_HEADER]: String(timestamp),
          [SIGNATURE_HEADER]: signWebhook(this.webhooks.signingSecret(hook), timestamp, body),
          'X-Tollgate-Alert-Id': alertId,
        },
        body,
      });
      await res.body?.cancel();
      if (res.status >= 200 && res.status < 300) return null;
      return `webhook ${hook.id} answered HTTP ${res.status}`;
    } catch (err) {
      const refused = outboundExceptionIn(err);
      const reason = refused
        ? refused.message
        : err instanceof Error
          ? err.name === 'TimeoutError'
            ? `timed out after ${DELIVERY_TIMEOUT_MS} ms`
            : err.message
          : String(err);
      this.logger.warn(`alert ${alertId} to webhook ${hook.id} failed: ${reason}`);
      return `webhook ${hook.id}: ${reason}`;
    }
  }
}
