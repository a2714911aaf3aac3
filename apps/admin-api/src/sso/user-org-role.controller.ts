import { Body, Controller, Get, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { PrismaService } from '@tollgate/db';
import { AdminPrincipal, IdentityException, IdentityExceptionCode } from '@tollgate/identity';
import { AuditService } from '../audit/audit.service';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/error-body.view';
import { UuidParam } from '../common/uuid-param.decorator';
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
  constructor(
    private readonly prisma: PrismaService,
    private readonly audit: AuditService,
  ) {}

  @Get()
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: 'The person’s organisation-wide role (null: only what their memberships give)' })
  @ApiOkResponse({ type: OrgRoleView })
  async get(@UuidParam('orgId') orgId: string, @UuidParam('userId') userId: string): Promise<OrgRoleView> {
    const user = await this.user(orgId, userId);
    return { userId, role: user.orgRole };
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
    const before = await this.user(orgId, userId);
    if (before.offboardedAt && dto.role !== null)
      throw new IdentityException(IdentityExceptionCode.UserOffboarded, `user ${userId} is offboarded`, 'userId');
    await this.prisma.user.updateMany({ where: { id: userId, orgId }, data: { orgRole: dto.role } });
    await this.audit.record(admin, {
      orgId,
      action: 'user.org-role-set',
      targetType: 'user',
      targetId: userId,
      details: { from: before.orgRole, to: dto.role },
    });
    return { userId, role: dto.role };
  }

  private async user(orgId: string, userId: string) {
    const user = await this.prisma.user.findFirst({
      where: { id: userId, orgId },
      select: { orgRole: true, offboardedAt: true },
    });
    if (!user) throw new IdentityException(IdentityExceptionCode.UserNotFound, `user ${userId} not found`, 'userId');
    return user;
  }
}
