import { Controller, Get, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { AuditEventView, AuditFacetsView, AuditPageView, toAuditEventView } from './audit-event.view';
import { AuditService } from './audit.service';
import { ListAuditQuery } from './list-audit.query';
import { SearchAuditQuery } from './search-audit.query';

@ApiTags('audit')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization (or another organization’s)' })
@Controller('v1/orgs/:orgId/audit')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @OrgAccess(OrgAccessLevel.Audit)
  @ApiOperation({
    summary:
      'The latest audit events matching the filters, as a plain array (org admins and finance); page through older ones with GET …/audit/search',
  })
  @ApiOkResponse({ type: [AuditEventView] })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  async listAuditEvents(@UuidParam('orgId') orgId: string, @Query() query: ListAuditQuery): Promise<AuditEventView[]> {
    return (await this.audit.search(orgId, query)).events.map(toAuditEventView);
  }

  @Get('search')
  @OrgAccess(OrgAccessLevel.Audit)
  @ApiOperation({
    summary:
      'A page of the audit trail, latest first, filtered by action, actor, target and days in the org’s time zone, with the cursor of the next page (org admins and finance)',
  })
  @ApiOkResponse({ type: AuditPageView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  async searchAuditEvents(@UuidParam('orgId') orgId: string, @Query() query: SearchAuditQuery): Promise<AuditPageView> {
    const page = await this.audit.search(orgId, query);
    return { events: page.events.map(toAuditEventView), nextCursor: page.nextCursor };
  }

  @Get('facets')
  @OrgAccess(OrgAccessLevel.Audit)
  @ApiOperation({
    summary:
      'The actions, target types and actors found in the organization’s trail, to filter by (org admins and finance)',
  })
  @ApiOkResponse({ type: AuditFacetsView })
  async auditFacets(@UuidParam('orgId') orgId: string): Promise<AuditFacetsView> {
    return this.audit.facets(orgId);
  }
}
