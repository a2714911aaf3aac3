import { Controller, Get, HttpCode, HttpStatus, NotFoundException, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import type { AdminPrincipal } from '@tollgate/identity';
import { BudgetDrift, BudgetReconcileService, FinanceJobs, ReconcileReport } from '@tollgate/reporting';
import { AuditService } from '../audit/audit.service';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/error-body.view';
import { UuidParam } from '../common/uuid-param.decorator';

export class BudgetDriftView {
  @ApiProperty({ format: 'uuid' }) budgetId!: string;
  @ApiProperty() scope!: string;
  @ApiProperty({ format: 'uuid' }) scopeId!: string;
  @ApiProperty() period!: string;
  @ApiProperty() periodStart!: string;
  @ApiPropertyOptional({ type: 'integer', nullable: true, description: 'The Redis counter; null if it was missing' }) counterSpentMicros!: number | null;
  @ApiProperty({ type: 'integer' }) ledgerSpentMicros!: number;
  @ApiProperty({ type: 'integer', description: 'counter - ledger' }) driftMicros!: number;
}

export class ReconcileReportView {
  @ApiProperty({ format: 'uuid' }) orgId!: string;
  @ApiProperty() ranAt!: string;
  @ApiProperty({ type: 'integer' }) budgetsChecked!: number;
  @ApiProperty({ type: [BudgetDriftView] }) drift!: BudgetDriftView[];
  @ApiProperty({ type: [BudgetDriftView], description: 'Missing counters rebuilt from the ledger' }) rebuilt!: BudgetDriftView[];
}

function toDriftView(d: BudgetDrift): BudgetDriftView {
  return {
    ...d,
    counterSpentMicros: d.counterSpentMicros === null ? null : Number(d.counterSpentMicros),
    ledgerSpentMicros: Number(d.ledgerSpentMicros),
    driftMicros: Number(d.driftMicros),
  };
}

function toReconcileView(r: ReconcileReport): ReconcileReportView {
  return { ...r, drift: r.drift.map(toDriftView), rebuilt: r.rebuilt.map(toDriftView) };
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
  @ApiOperation({ summary: 'Check every budget counter of the org against the ledger now (a worker job; the worker also runs it every 5 minutes)' })
  @ApiAcceptedResponse({ schema: { type: 'object', properties: { jobId: { type: 'string' } } } })
  async requestReconcile(@CurrentAdmin() admin: AdminPrincipal, @UuidParam('orgId') orgId: string): Promise<{ jobId: string }> {
    const jobId = await this.jobs.requestReconcile(orgId);
    await this.audit.record(admin, { orgId, action: 'budget.reconcile-requested', targetType: 'budget', targetId: null, details: { jobId } });
    return { jobId };
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
