import { Body, Controller, Get, Headers, HttpCode, HttpStatus, Post, Query, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
} from '@nestjs/swagger';
import { AdminPrincipal, auditBy, IdentityService } from '@tollgate/identity';
import {
  BudgetUtilisationService,
  DEFAULT_REPORT_TOP,
  FinanceJobs,
  SpendReportService,
  pageSpendReport,
  parseFilterList,
  parseGroupBy,
  parseReportSort,
  ReportingException,
  ReportingExceptionCode,
  reportLines,
  spendReportCsv,
} from '@tollgate/reporting';
import type { Response } from 'express';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { reportScopeOf } from './report-scope';
import { RollupRequestDto, SpendReportQuery } from './spend-report.query';
import {
  BudgetUtilisationView,
  RollupRebuildView,
  SpendReportView,
  toBudgetUtilisationView,
  toPagedSpendReportView,
  toSpendReportView,
} from './spend-report.view';
import { callerFilters } from './report-query';

@ApiTags('reports')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization (or another organization’s)' })
@Controller('v1/orgs/:orgId/reports')
export class ReportsController {
  constructor(
    private readonly spend: SpendReportService,
    private readonly utilisation: BudgetUtilisationService,
    private readonly jobs: FinanceJobs,
    private readonly identity: IdentityService,
  ) {}

  @Get('spend')
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({
    summary:
      'Spend over the organization’s calendar days (its time zone), equal to the ledger’s sums, broken down by team, user, key, upstream, tool, day and/or key tag, filtered by teamId, userId, keyId, upstreamId, tool and tag. Any role of the org: org admins, finance and platform admins see the org, a team admin only its team’s calls, a member only their own',
  })
  @ApiProduces('application/json', 'text/csv')
  @ApiOkResponse({
    type: SpendReportView,
    description: 'JSON, or CSV of the same rows with Accept: text/csv or format=csv',
  })
  @ApiBadRequestResponse({ type: ErrorBodyView, description: 'A malformed parameter; `field` names it' })
  @ApiForbiddenResponse({
    type: ErrorBodyView,
    description: 'A teamId (team admin) or userId (member) outside the caller’s scope; `field` names it',
  })
  async spendReport(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Query() query: SpendReportQuery,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<SpendReportView | string> {
    const filters = {
      ...callerFilters(query),
      upstreamId: parseFilterList(query.upstreamId, 'upstreamId'),
      tool: parseFilterList(query.tool, 'tool'),
      tag: query.tag ?? null,
    };
    const groupBy = parseGroupBy(query.groupBy);
    const sort = parseReportSort(query.sort, groupBy);
    const scope = reportScopeOf(admin);
    const csv = query.format === 'csv' || (query.format === undefined && wantsCsv(accept));
    if (query.top !== undefined && query.limit !== undefined && !csv)
      throw new ReportingException(
        ReportingExceptionCode.InvalidQuery,
        'top bounds the answer without limit: a page (limit) is bounded already, leave top out',
        'top',
      );
    // The CSV and the pages are of every row; the JSON answer holds the costliest `top`.
    const top = csv || query.limit !== undefined ? undefined : (query.top ?? DEFAULT_REPORT_TOP);
    // A page is numbered and cut in Postgres where it can be (spendReportPage answers null where it
    // needs every row: then it is cut here from the whole report).
    const page = query.limit !== undefined && !csv ? { offset: query.offset ?? 0, limit: query.limit, sort } : null;
    const [paged, org] = await Promise.all([
      page && this.spend.spendReportPage(orgId, query.from, query.to, groupBy, { filters, scope, ...page }),
      this.identity.getOrganization(orgId),
    ]);
    if (paged) return toPagedSpendReportView(paged.report, org.currency, { page: paged.page, perDay: null });
    const report = await this.spend.spendReport(orgId, query.from, query.to, groupBy, { filters, scope, top });
    if (csv) {
      res.setHeader('Content-Type', 'text/csv; charset=utf-8');
      res.setHeader('Content-Disposition', `attachment; filename="spend-${report.from}-${report.to}.csv"`);
      return spendReportCsv(report);
    }
    if (page) return toPagedSpendReportView(report, org.currency, pageSpendReport(report, page));
    if (!sort) return toSpendReportView(report, org.currency, top ?? null);
    const rows = reportLines(report.rows, [], sort).flatMap((l) => (l.kind === 'row' ? [l.row] : []));
    return toSpendReportView({ ...report, rows }, org.currency, top ?? null);
  }

  @Get('budgets')
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({
    summary:
      'Each budget’s spend in its current period (calendar period in the org’s time zone), highest utilisation first. Any role of the org: org admins, finance and platform admins see every budget; a team admin its team’s budget, its members’ and its keys’; a member their own user budget and their keys’',
  })
  @ApiOkResponse({ type: [BudgetUtilisationView] })
  async budgetUtilisation(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
  ): Promise<BudgetUtilisationView[]> {
    return (await this.utilisation.budgetUtilisation(orgId, reportScopeOf(admin))).map(toBudgetUtilisationView);
  }

  @Post('rollups')
  @HttpCode(HttpStatus.ACCEPTED)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Repair this organization’s rollups: the worker rebuilds them from the ledger, those of one day (the org’s local day in spend reports, the UTC day in tool scores) or, without a day, all of them. The ledger’s insert trigger keeps them; this is for rollups found wrong. Days of months retention dropped keep their tool-score rollup',
  })
  @ApiAcceptedResponse({ type: RollupRebuildView })
  @ApiBadRequestResponse({ type: ErrorBodyView, description: '`day` is not a real date YYYY-MM-DD' })
  async requestRollup(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Body() dto: RollupRequestDto,
  ): Promise<RollupRebuildView> {
    return this.jobs.requestRollupRebuild(orgId, dto.day ?? null, {
      by: auditBy(admin),
      entry: ({ jobId, day }) => ({
        orgId,
        action: 'rollup.requested',
        targetType: 'usage-rollup',
        targetId: null,
        details: { day, jobId },
      }),
    });
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
