import { Controller, Get, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { AdminPrincipal } from '@tollgate/identity';
import {
  BLOCKING_WINDOW_MINUTES,
  RefusalReportService,
  parseCodeList,
  parseFilterList,
  parseRefusalGroupBy,
} from '@tollgate/reporting';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { RefusalReportQuery } from './refusal-report.query';
import {
  BlockingBudgetsView,
  RefusalReportView,
  toBlockingBudgetsView,
  toRefusalReportView,
} from './refusal-report.view';
import { reportScopeOf } from './report-scope';
import { callerFilters } from './report-query';

@ApiTags('reports')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization (or another organization’s)' })
@Controller('v1/orgs/:orgId/reports/refusals')
export class RefusalsController {
  constructor(private readonly refusals: RefusalReportService) {}

  @Get()
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({
    summary:
      'Refused governed calls (BUDGET_EXCEEDED, TOOL_NOT_ALLOWED, RATE_LIMITED …) over the organization’s calendar days, counted exactly, broken down by team, user, key, tool and/or code. Any role of the org, scoped like the spend reports: a team admin sees its team’s refusals, a member their own',
  })
  @ApiOkResponse({ type: RefusalReportView })
  @ApiBadRequestResponse({ type: ErrorBodyView, description: 'A malformed parameter; `field` names it' })
  @ApiForbiddenResponse({ type: ErrorBodyView, description: 'A teamId or userId outside the caller’s scope' })
  async refusalReport(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Query() query: RefusalReportQuery,
  ): Promise<RefusalReportView> {
    const report = await this.refusals.refusalReport(orgId, query.from, query.to, parseRefusalGroupBy(query.groupBy), {
      filters: {
        ...callerFilters(query),
        tool: parseFilterList(query.tool, 'tool'),
        code: parseCodeList(query.code),
      },
      scope: reportScopeOf(admin),
    });
    return toRefusalReportView(report);
  }

  @Get('blocking')
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({
    summary: `Budgets blocking calls now: each budget that refused calls (BUDGET_EXCEEDED) in the last ${BLOCKING_WINDOW_MINUTES} minutes, with how many, within the caller’s scope`,
  })
  @ApiOkResponse({ type: BlockingBudgetsView })
  async blockingBudgets(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
  ): Promise<BlockingBudgetsView> {
    return toBlockingBudgetsView(
      BLOCKING_WINDOW_MINUTES,
      await this.refusals.blockingBudgets(orgId, reportScopeOf(admin)),
    );
  }
}
