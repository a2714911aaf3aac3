import { Body, Controller, Get, HttpCode, HttpStatus, NotFoundException, Post } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiPropertyOptional,
  ApiTags,
} from '@nestjs/swagger';
import { JobName } from '@tollgate/queue';
import { IsBoolean, IsOptional } from 'class-validator';
import type { AdminPrincipal } from '@tollgate/identity';
import { BudgetDrift, BudgetReconcileService, BudgetRepair, FinanceJobs, ReconcileReport } from '@tollgate/reporting';
import { AuditService } from '../audit/audit.service';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';

export class BudgetDriftView {
  @ApiProperty({ format: 'uuid' }) budgetId!: string;
  @ApiProperty() scope!: string;
  @ApiProperty({ format: 'uuid' }) scopeId!: string;
  @ApiProperty() period!: string;
  @ApiProperty() periodStart!: string;
  @ApiPropertyOptional({ type: 'integer', nullable: true, description: 'The Redis counter; null if it was missing' })
  counterSpentMicros!: number | null;
  @ApiProperty({ type: 'integer' }) ledgerSpentMicros!: number;
  @ApiProperty({ type: 'integer', description: 'Settled calls still in the usage outbox, not yet in the ledger' })
  outboxSpentMicros!: number;
  @ApiProperty({ type: 'integer', description: 'counter - (ledger + outbox)' }) driftMicros!: number;
  @ApiPropertyOptional({
    enum: ['repaired', 'counter-moving', 'not-requested'],
    description: 'On drift entries: what became of it',
  })
  repair?: string;
}

export class BudgetRepairView {
  @ApiProperty({ format: 'uuid' }) budgetId!: string;
  @ApiProperty() scope!: string;
  @ApiProperty({ format: 'uuid' }) scopeId!: string;
  @ApiProperty() period!: string;
  @ApiProperty() periodStart!: string;
  @ApiProperty({ type: 'integer', description: 'The counter before the repair' }) beforeMicros!: number;
  @ApiProperty({ type: 'integer', description: 'The counter after it: ledger + outbox' }) afterMicros!: number;
}

export class RequestReconcileDto {
  @ApiPropertyOptional({
    default: false,
    description:
      "Set drifted counters' spent back to the ledger plus the outbox (audited); the 5-minute schedule always repairs",
  })
  @IsOptional()
  @IsBoolean()
  repair?: boolean;
}

export class ReconcileReportView {
  @ApiProperty({ format: 'uuid' }) orgId!: string;
  @ApiProperty() ranAt!: string;
  @ApiProperty({ type: 'integer' }) budgetsChecked!: number;
  @ApiProperty({ type: [BudgetDriftView] }) drift!: BudgetDriftView[];
  @ApiProperty({ type: [BudgetRepairView], description: 'Counters set back to the ledger plus the outbox' })
  repaired!: BudgetRepairView[];
  @ApiProperty({ type: [BudgetDriftView], description: 'Missing counters rebuilt from the ledger' })
  rebuilt!: BudgetDriftView[];
}

function toDriftView(d: BudgetDrift): BudgetDriftView {
  return {
    ...d,
    counterSpentMicros: d.counterSpentMicros === null ? null : Number(d.counterSpentMicros),
    ledgerSpentMicros: Number(d.ledgerSpentMicros),
    // Reports kept from before the outbox was counted have none.
    outboxSpentMicros: Number(d.outboxSpentMicros ?? 0),
    driftMicros: Number(d.driftMicros),
  };
}

function toRepairView(r: BudgetRepair): BudgetRepairView {
  return { ...r, beforeMicros: Number(r.beforeMicros), afterMicros: Number(r.afterMicros) };
}

function toReconcileView(r: ReconcileReport): ReconcileReportView {
  return {
    ...r,
    drift: r.drift.map(toDriftView),
    repaired: (r.repaired ?? []).map(toRepairView),
    rebuilt: r.rebuilt.map(toDriftView),
  };
}

@ApiTags('budgets')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView })
@Controller('v1/orgs/:orgId/budgets/reconcile')
export class BudgetReconcileController {
  constructor(
    private readonly reconcile: BudgetReconcileService,
    private readonly jobs: FinanceJobs,
    private readonly audit: AuditService,
  ) {}

  @Post()
  @HttpCode(HttpStatus.ACCEPTED)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Check every budget counter of the org against the ledger plus the usage outbox now, and with `repair` set drifted counters back (a worker job; the worker also runs it, repairing, every 5 minutes)',
  })
  @ApiAcceptedResponse({ schema: { type: 'object', properties: { jobId: { type: 'string' } } } })
  async requestReconcile(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Body() body: RequestReconcileDto,
  ): Promise<{ jobId: string }> {
    const repair = body?.repair ?? false;
    const job = await this.jobs.enqueue(
      JobName.ReconcileBudgets,
      { orgId, repair },
      { jobId: `reconcile-${orgId}-${Date.now()}` },
    );
    await this.audit.record(admin, {
      orgId,
      action: 'budget.reconcile-requested',
      targetType: 'budget',
      targetId: null,
      details: { jobId: job.id, repair },
    });
    return { jobId: job.id! };
  }

  @Get()
  @OrgAccess(OrgAccessLevel.Audit)
  @ApiOperation({ summary: 'The last reconciliation of the org: drift per budget and counters rebuilt' })
  @ApiOkResponse({ type: ReconcileReportView })
  async lastReconcile(@UuidParam('orgId') orgId: string): Promise<ReconcileReportView> {
    const report = await this.reconcile.lastReport(orgId);
    if (!report) throw new NotFoundException(`no reconciliation of organization ${orgId} in the past week`);
    return toReconcileView(report);
  }
}
