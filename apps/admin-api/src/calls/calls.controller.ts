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
  CallLogService,
  decodeCallCursor,
  parseCodeList,
  parseFilterList,
  parseOutcomeList,
} from '@tollgate/reporting';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { reportScopeOf } from '../reports/report-scope';
import { CallLogQuery } from './call-log.query';
import { CallLogPageView, toCallLogPageView } from './call-log.view';
import { callerFilters } from '../reports/report-query';

@ApiTags('reports')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization (or another organization’s)' })
@Controller('v1/orgs/:orgId/calls')
export class CallsController {
  constructor(private readonly calls: CallLogService) {}

  @Get()
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({
    summary:
      'The per-call log: every governed call in the ledger and every refused call, newest first, filtered by key, user, team, tool, outcome, refusal code and days (the org’s time zone), a page at a time (keyset cursor). Any role of the org, scoped like the spend reports: a team admin sees its team’s calls, a member their own',
  })
  @ApiOkResponse({ type: CallLogPageView })
  @ApiBadRequestResponse({ type: ErrorBodyView, description: 'A malformed parameter; `field` names it' })
  @ApiForbiddenResponse({ type: ErrorBodyView, description: 'A teamId or userId outside the caller’s scope' })
  async callLog(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Query() query: CallLogQuery,
  ): Promise<CallLogPageView> {
    const page = await this.calls.callLog(
      orgId,
      {
        from: query.from,
        to: query.to,
        ...callerFilters(query),
        tool: parseFilterList(query.tool, 'tool'),
        outcome: parseOutcomeList(query.outcome),
        code: parseCodeList(query.code),
        limit: query.limit,
        cursor: query.cursor ? decodeCallCursor(query.cursor) : null,
      },
      reportScopeOf(admin),
    );
    return toCallLogPageView(page);
  }
}
