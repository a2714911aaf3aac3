import { Body, Controller, ForbiddenException, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBadRequestResponse, ApiCreatedResponse, ApiForbiddenResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { PrismaService } from '@tollgate/db';
import { AdminPrincipal, AdminTokenService, IdentityException, IdentityExceptionCode, IdentityService } from '@tollgate/identity';
import { AuditService } from '../audit/audit.service';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { ErrorBodyView } from '../common/error-body.view';
import { FieldValidationException } from '../common/field-validation.exception';
import { decideAdminTokenGrant, decideTeamAdminHolder } from './admin-token-grant';
import { CreateAdminTokenDto } from './create-admin-token.dto';
import { IssuedAdminTokenView } from './issued-admin-token.view';

@ApiTags('admin tokens')
@ApiBearerAuth()
@Controller('v1/admin-tokens')
export class AdminTokensController {
  constructor(
    private readonly tokens: AdminTokenService,
    private readonly identity: IdentityService,
    private readonly audit: AuditService,
    private readonly prisma: PrismaService,
  ) {}

  @Post()
  @HttpCode(HttpStatus.CREATED)
  @ApiOperation({ summary: 'Issue an admin token; the secret is in this answer only' })
  @ApiCreatedResponse({ type: IssuedAdminTokenView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  @ApiForbiddenResponse({ type: ErrorBodyView })
  async issueAdminToken(@CurrentAdmin() admin: AdminPrincipal, @Body() dto: CreateAdminTokenDto): Promise<IssuedAdminTokenView> {
    const grant = decideAdminTokenGrant(admin, dto);
    if (!grant.allowed) {
      if (grant.status === 400) throw new FieldValidationException(grant.field ?? 'role', [grant.message]);
      if (grant.status === 404) throw new IdentityException(IdentityExceptionCode.OrgNotFound, grant.message, grant.field);
      throw new ForbiddenException(grant.message);
    }
    if (grant.orgId) {
      await this.identity.getOrganization(grant.orgId);
      if (dto.teamId) await this.identity.getTeam(grant.orgId, dto.teamId);
      if (dto.userId) await this.identity.getUser(grant.orgId, dto.userId);
      if (dto.role === 'TEAM_ADMIN' && dto.teamId && dto.userId) {
        const membership = await this.prisma.teamMember.findFirst({
          where: { orgId: grant.orgId, teamId: dto.teamId, userId: dto.userId },
          select: { isTeamAdmin: true },
        });
        const holder = decideTeamAdminHolder(dto, membership);
        if (!holder.allowed) throw new FieldValidationException(holder.field, [holder.message]);
      }
    }
    const issued = await this.tokens.createAdminToken({ role: dto.role, orgId: grant.orgId, teamId: dto.teamId, userId: dto.userId, name: dto.name });
    await this.audit.record(admin, {
      orgId: grant.orgId,
      action: 'admin-token.created',
      targetType: 'admin-token',
      targetId: issued.id,
      details: { role: dto.role, name: dto.name, prefix: issued.prefix, teamId: dto.teamId, userId: dto.userId },
    });
    return { id: issued.id, prefix: issued.prefix, secret: issued.secret, role: dto.role, orgId: grant.orgId, name: dto.name };
  }
}
