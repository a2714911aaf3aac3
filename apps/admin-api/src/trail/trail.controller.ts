import { Controller, Get, Query, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { AdminPrincipal } from '@tollgate/identity';
import {
  MAX_TRAIL_EXPORT,
  MAX_TRAIL_PAGE,
  TrailQuery as TrailFilters,
  TrailService,
  decodeCallCursor,
  parseTrailInstant,
  parseTrailKinds,
} from '@tollgate/reporting';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { callerFilters } from '../reports/report-query';
import { reportScopeOf } from '../reports/report-scope';
import { TrailExportQuery, TrailQuery } from './trail.query';
import { TrailPageView, toTrailPageView, toTrailStepView } from './trail.view';

const SCOPE_NOTE =
  'Any role of the org, scoped like the call log: org admins (and finance, platform admins) every key, a team admin its team’s keys, a member their own';

@ApiTags('trail')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization (or another organization’s)' })
@ApiBadRequestResponse({ type: ErrorBodyView, description: 'A malformed filter; `field` names it' })
@ApiForbiddenResponse({ type: ErrorBodyView, description: 'A teamId or userId outside the caller’s scope' })
@Controller('v1/orgs/:orgId/trail')
export class TrailController {
  constructor(private readonly trail: TrailService) {}

  @Get()
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({
    summary: `What agents were shown and did, oldest first: tool, resource and prompt lists, searches (query, ranked names), schema, stub and doc reads, result pages, calls, reads, gets and scripts, each with its tokens, cost, catalog version and ledger id; a call, read or get names the step that led to it, a script the stubs it was written against. Filter by session, key, user, team, kind and time; a page at a time (keyset cursor). ${SCOPE_NOTE}`,
  })
  @ApiOkResponse({ type: TrailPageView })
  async timeline(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Query() query: TrailQuery,
  ): Promise<TrailPageView> {
    const page = await this.trail.trail(
      orgId,
      { ...filtersOf(query), limit: query.limit, cursor: query.cursor ? decodeCallCursor(query.cursor) : null },
      reportScopeOf(admin),
    );
    return toTrailPageView(page);
  }

  @Get('export')
  @OrgAccess(OrgAccessLevel.Read)
  @ApiProduces('application/x-ndjson')
  @ApiOperation({
    summary: `The same steps as JSON lines (one step per line, oldest first, at most ${MAX_TRAIL_EXPORT}), for a session or a key across sessions. ${SCOPE_NOTE}`,
  })
  @ApiOkResponse({ description: 'One TrailStep JSON object per line' })
  async export(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Query() query: TrailExportQuery,
    @Res() res: Response,
  ): Promise<void> {
    const filters = filtersOf(query);
    const scope = reportScopeOf(admin);
    // The first page is read before the headers go out, so a bad filter is still a 4xx.
    let page = await this.trail.trail(orgId, { ...filters, limit: MAX_TRAIL_PAGE }, scope);
    res.setHeader('Content-Type', 'application/x-ndjson; charset=utf-8');
    res.setHeader('Content-Disposition', `attachment; filename="trail-${query.sessionId ?? orgId}.jsonl"`);
    let sent = 0;
    for (;;) {
      const lines = page.rows.slice(0, MAX_TRAIL_EXPORT - sent).map((r) => JSON.stringify(toTrailStepView(r)));
      if (lines.length) res.write(`${lines.join('\n')}\n`);
      sent += lines.length;
      if (!page.nextCursor || sent >= MAX_TRAIL_EXPORT) break;
      page = await this.trail.trail(orgId, { ...filters, limit: MAX_TRAIL_PAGE, cursor: page.nextCursor }, scope);
    }
    res.end();
  }
}

function filtersOf(query: TrailExportQuery): TrailFilters {
  return {
    ...(query.sessionId !== undefined ? { sessionId: query.sessionId } : {}),
    ...callerFilters(query),
    kind: parseTrailKinds(query.kind),
    from: parseTrailInstant(query.from, 'from'),
    to: parseTrailInstant(query.to, 'to'),
  };
}
