import { Body, Controller, Get, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { AdminPrincipal, auditBy, PeopleAdminService } from '@tollgate/identity';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { PutOrgRoleDto } from './put-org-role.dto';

export class OrgRoleView {
  @ApiProperty({ format: 'uuid' }) userId!: string;
  @ApiProperty({ enum: ['ORG_ADMIN', 'FINANCE'], nullable: true, type: String }) role!: 'ORG_ADMIN' | 'FINANCE' | null;
}

/**
 * A person's organisation-wide role (org admin or finance), beside the team admin and member
 * roles their memberships give. Single sign-on sessions act with the strongest role held.
 */
@ApiTags('auth')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization or user' })
@Controller('v1/orgs/:orgId/users/:userId/org-role')
export class UserOrgRoleController {
  constructor(private readonly people: PeopleAdminService) {}

  @Get()
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: 'The person’s organisation-wide role (null: only what their memberships give)' })
  @ApiOkResponse({ type: OrgRoleView })
  async get(@UuidParam('orgId') orgId: string, @UuidParam('userId') userId: string): Promise<OrgRoleView> {
    return { userId, role: await this.people.getOrgRole(orgId, userId) };
  }

  @Put()
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Grant (ORG_ADMIN, FINANCE) or withdraw (null) the person’s organisation-wide role; sessions follow on their next request',
  })
  @ApiOkResponse({ type: OrgRoleView })
  async put(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('userId') userId: string,
    @Body() dto: PutOrgRoleDto,
  ): Promise<OrgRoleView> {
    const role = await this.people.setOrgRole(orgId, userId, dto.role, {
      by: auditBy(admin),
      entry: (change) => ({
        orgId,
        action: 'user.org-role-set',
        targetType: 'user',
        targetId: change.userId,
        details: { from: change.from, to: change.to },
      }),
    });
    return { userId, role };
  }
}
