import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { AlertWebhook, BudgetAlert } from '@tollgate/db';
import { microsToJson } from '@tollgate/kernel';

export class AlertWebhookView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) orgId!: string;
  @ApiProperty() url!: string;
  @ApiPropertyOptional({ nullable: true, type: String }) description!: string | null;
  @ApiProperty() createdAt!: Date;
}

export class IssuedAlertWebhookView {
  @ApiProperty({ type: AlertWebhookView }) webhook!: AlertWebhookView;
  @ApiProperty({ example: 'whsec_...', description: 'HMAC-SHA-256 signing secret; shown in this answer only' })
  secret!: string;
}

export function toAlertWebhookView(w: AlertWebhook): AlertWebhookView {
  return { id: w.id, orgId: w.orgId, url: w.url, description: w.description, createdAt: w.createdAt };
}

export class BudgetAlertView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) orgId!: string;
  @ApiProperty({ format: 'uuid' }) budgetId!: string;
  @ApiProperty({ description: 'Start of the budget period the threshold was crossed in' }) periodStart!: Date;
  @ApiProperty({ type: 'integer', description: 'Percent of the limit' }) threshold!: number;
  @ApiProperty({ type: 'integer', description: 'Spend when the crossing was detected (micro-units)' })
  spentMicros!: number;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) deliveredAt!: Date | null;
  @ApiProperty({ type: 'integer', description: 'Delivery attempts so far' }) attempts!: number;
  @ApiProperty({ nullable: true, type: String, description: 'The last delivery failure' }) lastError!: string | null;
  @ApiProperty() createdAt!: Date;
}

export function toBudgetAlertView(a: BudgetAlert): BudgetAlertView {
  return {
    id: a.id,
    orgId: a.orgId,
    budgetId: a.budgetId,
    periodStart: a.periodStart,
    threshold: a.threshold,
    spentMicros: microsToJson(a.spentMicros),
    deliveredAt: a.deliveredAt,
    attempts: a.attempts,
    lastError: a.lastError,
    createdAt: a.createdAt,
  };
}
