import { Body, Controller, ForbiddenException, Get, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiForbiddenResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminPrincipal, IdentityService } from '@tollgate/identity';
import { AuditService } from '../audit/audit.service';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/error-body.view';
import { UuidParam } from '../common/uuid-param.decorator';
import { CreateOrgDto } from './create-org.dto';
import { OrgView, toOrgView } from './org.view';

@ApiTags('organizations')
@ApiBearerAuth()
@Controller('v1/orgs')
export class OrgsController {
  constructor(
    private readonly identity: IdentityService,
    private readonly audit: AuditService,
  ) {}

  @Post()
  @HttpCode(HttpStatus.CREATED)
  @ApiOperation({ summary: 'Create an organization (platform admins only)' })
  @ApiCreatedResponse({ type: OrgView })
  @ApiForbiddenResponse({ type: ErrorBodyView })
  async createOrg(@CurrentAdmin() admin: AdminPrincipal, @Body() dto: CreateOrgDto): Promise<OrgView> {
    if (admin.role !== 'PLATFORM_ADMIN') throw new ForbiddenException('only a platform admin may create organizations');
    const org = await this.identity.createOrganization(dto);
    await this.audit.record(admin, { orgId: org.id, action: 'org.created', targetType: 'organization', targetId: org.id, details: { ...dto } });
    return toOrgView(org);
  }

  @Get()
  @ApiOperation({ summary: 'List organizations (all for platform admins, otherwise the caller’s own)' })
  @ApiOkResponse({ type: [OrgView] })
  async listOrgs(@CurrentAdmin() admin: AdminPrincipal): Promise<OrgView[]> {
    if (admin.role === 'PLATFORM_ADMIN') return (await this.identity.listOrganizations()).map(toOrgView);
    if (!admin.orgId) return [];
    return [toOrgView(await this.identity.getOrganization(admin.orgId))];
  }

  @Get(':orgId')
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: 'Get an organization' })
  @ApiOkResponse({ type: OrgView })
  @ApiNotFoundResponse({ type: ErrorBodyView })
  async getOrg(@UuidParam('orgId') orgId: string): Promise<OrgView> {
    return toOrgView(await this.identity.getOrganization(orgId));
  }
}
