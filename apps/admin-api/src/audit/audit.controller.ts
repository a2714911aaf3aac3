import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/error-body.view';
import { UuidParam } from '../common/uuid-param.decorator';
import { AuditEventView, toAuditEventView } from './audit-event.view';
import { AuditService } from './audit.service';
import { ListAuditQuery } from './list-audit.query';

@ApiTags('audit')
@ApiBearerAuth()
@Controller('v1/orgs/:orgId/audit')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @OrgAccess(OrgAccessLevel.Audit)
  @ApiOperation({ summary: 'The organization’s audit trail, latest first (org admins and finance)' })
  @ApiOkResponse({ type: [AuditEventView] })
  @ApiNotFoundResponse({ type: ErrorBodyView })
  async listAuditEvents(@UuidParam('orgId') orgId: string, @Query() query: ListAuditQuery): Promise<AuditEventView[]> {
    return (await this.audit.listForOrg(orgId, query.limit ?? 50)).map(toAuditEventView);
  }
}
