import { Body, Controller, Get, Headers, HttpCode, HttpStatus, Post, Query, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
} from '@nestjs/swagger';
import { AdminPrincipal, IdentityService } from '@tollgate/identity';
import {
  BudgetUtilisationService,
  FinanceJobs,
  ReportingException,
  ReportingExceptionCode,
  SpendReportService,
  parseGroupBy,
  parseUtcDay,
  spendReportCsv,
} from '@tollgate/reporting';
import type { Response } from 'express';
import { AuditService } from '../audit/audit.service';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/error-body.view';
import { UuidParam } from '../common/uuid-param.decorator';
import { RollupRequestDto, SpendReportQuery } from './spend-report.query';
import {
  BudgetUtilisationView,
  SpendReportView,
  toBudgetUtilisationView,
  toSpendReportView,
} from './spend-report.view';

@ApiTags('reports')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization (or another organization’s)' })
@Controller('v1/orgs/:orgId/reports')
export class ReportsController {
  constructor(
    private readonly spend: SpendReportService,
    private readonly utilisation: BudgetUtilisationService,
    private readonly jobs: FinanceJobs,
    private readonly audit: AuditService,
    private readonly identity: IdentityService,
  ) {}

  @Get('spend')
  @OrgAccess(OrgAccessLevel.Audit)
  @ApiOperation({
    summary:
      'Spend over the organization’s calendar days (its time zone) from the ledger, broken down by team, user, key, upstream, tool, day and/or key tag, optionally for one tag (finance, org admins)',
  })
  @ApiProduces('application/json', 'text/csv')
  @ApiOkResponse({
    type: SpendReportView,
    description: 'JSON, or CSV of the same rows with Accept: text/csv or format=csv',
  })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  async spendReport(
    @UuidParam('orgId') orgId: string,
    @Query() query: SpendReportQuery,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<SpendReportView | string> {
    const [report, org] = await Promise.all([
      this.spend.spendReport(orgId, query.from, query.to, parseGroupBy(query.groupBy), { tag: query.tag }),
      this.identity.getOrganization(orgId),
    ]);
    if (query.format === 'csv' || (query.format === undefined && wantsCsv(accept))) {
      res.setHeader('Content-Type', 'text/csv; charset=utf-8');
      res.setHeader('Content-Disposition', `attachment; filename="spend-${report.from}-${report.to}.csv"`);
      return spendReportCsv(report);
    }
    return toSpendReportView(report, org.currency);
  }

  @Get('budgets')
  @OrgAccess(OrgAccessLevel.Audit)
  @ApiOperation({
    summary:
      'Each budget’s spend in its current period (calendar period in the org’s time zone), highest utilisation first',
  })
  @ApiOkResponse({ type: [BudgetUtilisationView] })
  async budgetUtilisation(@UuidParam('orgId') orgId: string): Promise<BudgetUtilisationView[]> {
    return (await this.utilisation.budgetUtilisation(orgId)).map(toBudgetUtilisationView);
  }

  @Post('rollups')
  @HttpCode(HttpStatus.ACCEPTED)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Recompute the daily rollup of one UTC day for this organization (the worker also does today and yesterday every 10 minutes)',
  })
  @ApiOkResponse({ schema: { type: 'object', properties: { jobId: { type: 'string' } } } })
  async requestRollup(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Body() dto: RollupRequestDto,
  ): Promise<{ jobId: string }> {
    if (!parseUtcDay(dto.day))
      throw new ReportingException(ReportingExceptionCode.InvalidQuery, 'day must be a real date YYYY-MM-DD', 'day');
    const jobId = await this.jobs.requestRollup(dto.day, orgId);
    await this.audit.record(admin, {
      orgId,
      action: 'rollup.requested',
      targetType: 'usage-rollup',
      targetId: null,
      details: { day: dto.day, jobId },
    });
    return { jobId };
  }
}

/** CSV only when the client asks for it and does not prefer JSON. */
function wantsCsv(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept.split(',').map((t) => t.split(';')[0].trim().toLowerCase());
  const csv = types.indexOf('text/csv');
  const json = types.indexOf('application/json');
  return csv !== -1 && (json === -1 || csv < json);
}
