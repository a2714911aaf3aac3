import {
  Body,
  Controller,
  Delete,
  ForbiddenException,
  Get,
  HttpCode,
  HttpStatus,
  Patch,
  Post,
  Query,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { AdminPrincipal, auditBy, IdentityService, OrgLifecycleService } from '@tollgate/identity';
import { changes } from '../audit/audit-changes';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { CreateOrgDto } from './create-org.dto';
import { OrgView, toOrgView } from './org.view';
import { DeleteOrgQuery, UpdateOrgDto } from './update-org.dto';

@ApiTags('organizations')
@ApiBearerAuth()
@Controller('v1/orgs')
export class OrgsController {
  constructor(
    private readonly identity: IdentityService,
    private readonly lifecycle: OrgLifecycleService,
  ) {}

  @Post()
  @HttpCode(HttpStatus.CREATED)
  @ApiOperation({ summary: 'Create an organization (platform admins only)' })
  @ApiCreatedResponse({ type: OrgView })
  @ApiForbiddenResponse({ type: ErrorBodyView })
  async createOrg(@CurrentAdmin() admin: AdminPrincipal, @Body() dto: CreateOrgDto): Promise<OrgView> {
    if (admin.role !== 'PLATFORM_ADMIN') throw new ForbiddenException('only a platform admin may create organizations');
    const org = await this.identity.createOrganization(dto, {
      by: auditBy(admin),
      entry: (created) => ({
        orgId: created.id,
        action: 'org.created',
        targetType: 'organization',
        targetId: created.id,
        details: { ...dto },
      }),
    });
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

  @Patch(':orgId')
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Rename an organization, change its time zone, currency, tool review setting or what is kept of agents’ trails (org admins)',
  })
  @ApiOkResponse({ type: OrgView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  @ApiNotFoundResponse({ type: ErrorBodyView })
  @ApiConflictResponse({
    type: ErrorBodyView,
    description: 'The time zone changed concurrently (CONFLICT): read and retry',
  })
  async updateOrg(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Body() dto: UpdateOrgDto,
  ): Promise<OrgView> {
    const { after } = await this.lifecycle.updateOrganization(orgId, dto, {
      by: auditBy(admin),
      entry: (change) => ({
        orgId,
        action: 'org.updated',
        targetType: 'organization',
        targetId: orgId,
        details: changes(change.before, change.after, [
          'name',
          'timeZone',
          'currency',
          'autoApproveTools',
          'trailMode',
          'trailRetentionDays',
        ]),
      }),
    });
    return toOrgView(after);
  }

  @Post(':orgId/disable')
  @HttpCode(HttpStatus.OK)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Disable an organization (platform admins): every edge refuses its keys with ORG_DISABLED within a second; nothing is deleted',
  })
  @ApiOkResponse({ type: OrgView })
  @ApiForbiddenResponse({ type: ErrorBodyView })
  @ApiNotFoundResponse({ type: ErrorBodyView })
  async disableOrg(@CurrentAdmin() admin: AdminPrincipal, @UuidParam('orgId') orgId: string): Promise<OrgView> {
    requirePlatformAdmin(admin, 'disable an organization');
    const { after } = await this.lifecycle.setDisabled(orgId, true, {
      by: auditBy(admin),
      entry: (change) => ({
        orgId,
        action: 'org.disabled',
        targetType: 'organization',
        targetId: orgId,
        details: { disabledAt: change.after.disabledAt },
      }),
    });
    return toOrgView(after);
  }

  @Post(':orgId/enable')
  @HttpCode(HttpStatus.OK)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({ summary: 'Enable a disabled organization again (platform admins)' })
  @ApiOkResponse({ type: OrgView })
  @ApiForbiddenResponse({ type: ErrorBodyView })
  @ApiNotFoundResponse({ type: ErrorBodyView })
  async enableOrg(@CurrentAdmin() admin: AdminPrincipal, @UuidParam('orgId') orgId: string): Promise<OrgView> {
    requirePlatformAdmin(admin, 'enable an organization');
    const { after } = await this.lifecycle.setDisabled(orgId, false, {
      by: auditBy(admin),
      entry: () => ({ orgId, action: 'org.enabled', targetType: 'organization', targetId: orgId, details: {} }),
    });
    return toOrgView(after);
  }

  @Delete(':orgId')
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Delete a disabled organization (platform admins). data=keep hides it and keeps its rows; data=purge deletes its teams, users, keys, upstreams, budgets, policies, prices, limits and tokens. The usage ledger, its rollups and the audit trail are always kept',
  })
  @ApiOkResponse({ type: OrgView })
  @ApiBadRequestResponse({ type: ErrorBodyView, description: 'data is missing or not keep/purge' })
  @ApiConflictResponse({ type: ErrorBodyView, description: 'The organization is not disabled (ORG_NOT_DISABLED)' })
  @ApiForbiddenResponse({ type: ErrorBodyView })
  @ApiNotFoundResponse({ type: ErrorBodyView })
  async deleteOrg(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Query() query: DeleteOrgQuery,
  ): Promise<OrgView> {
    requirePlatformAdmin(admin, 'delete an organization');
    const org = await this.lifecycle.deleteOrganization(orgId, query.data, {
      by: auditBy(admin),
      // The audit row keeps the name and slug: a purged org's ledger rows still have someone to name them.
      entry: (deleted) => ({
        orgId,
        action: 'org.deleted',
        targetType: 'organization',
        targetId: orgId,
        details: { name: deleted.name, slug: deleted.slug, data: query.data },
      }),
    });
    return toOrgView(org);
  }
}

function requirePlatformAdmin(admin: AdminPrincipal, what: string): void {
  if (admin.role !== 'PLATFORM_ADMIN')
    throw new ForbiddenException(`only a platform admin may ${what}; role ${admin.role} may not`);
}
