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
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { PrismaService } from '@tollgate/db';
import {
  AdminPrincipal,
  AdminTokenService,
  IdentityException,
  IdentityExceptionCode,
  IdentityService,
} from '@tollgate/identity';
import { changes } from '../audit/audit-changes';
import { AuditService } from '../audit/audit.service';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { ErrorBodyView } from '../common/error-body.view';
import { FieldValidationException } from '../common/field-validation.exception';
import { UuidParam } from '../common/uuid-param.decorator';
import { decideAdminTokenGrant, decideTeamAdminHolder } from './admin-token-grant';
import { AdminTokenView, toAdminTokenView } from './admin-token.view';
import { CreateAdminTokenDto, ListAdminTokensQuery, UpdateAdminTokenDto } from './create-admin-token.dto';
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
  async issueAdminToken(
    @CurrentAdmin() admin: AdminPrincipal,
    @Body() dto: CreateAdminTokenDto,
  ): Promise<IssuedAdminTokenView> {
    const grant = decideAdminTokenGrant(admin, dto);
    if (!grant.allowed) {
      if (grant.status === 400) throw new FieldValidationException(grant.field ?? 'role', [grant.message]);
      if (grant.status === 404)
        throw new IdentityException(IdentityExceptionCode.OrgNotFound, grant.message, grant.field);
      throw new ForbiddenException(grant.message);
    }
    if (grant.orgId) {
      await this.identity.getOrganization(grant.orgId);
      if (dto.teamId) await this.identity.getTeam(grant.orgId, dto.teamId);
      if (dto.userId) await this.identity.getActiveUser(grant.orgId, dto.userId);
      if (dto.role === 'TEAM_ADMIN' && dto.teamId && dto.userId) {
        const membership = await this.prisma.teamMember.findFirst({
          where: { orgId: grant.orgId, teamId: dto.teamId, userId: dto.userId },
          select: { isTeamAdmin: true },
        });
        const holder = decideTeamAdminHolder(dto, membership);
        if (!holder.allowed) throw new FieldValidationException(holder.field, [holder.message]);
      }
    }
    const issued = await this.tokens.createAdminToken({
      role: dto.role,
      orgId: grant.orgId,
      teamId: dto.teamId,
      userId: dto.userId,
      name: dto.name,
      ownerLabel: dto.ownerLabel,
      expiresAt: dto.expiresAt ? new Date(dto.expiresAt) : null,
    });
    await this.audit.record(admin, {
      orgId: grant.orgId,
      action: 'admin-token.created',
      targetType: 'admin-token',
      targetId: issued.id,
      details: {
        role: dto.role,
        name: dto.name,
        prefix: issued.prefix,
        teamId: dto.teamId,
        userId: dto.userId,
        ownerLabel: dto.ownerLabel,
        expiresAt: issued.expiresAt,
      },
    });
    return {
      id: issued.id,
      prefix: issued.prefix,
      secret: issued.secret,
      role: dto.role,
      orgId: grant.orgId,
      name: dto.name,
      expiresAt: issued.expiresAt,
    };
  }

  @Get()
  @ApiOperation({
    summary:
      'List admin tokens with role, owner, creation, last use and expiry (platform admins: all or one org’s; org admins: their org’s); never secrets',
  })
  @ApiOkResponse({ type: [AdminTokenView] })
  @ApiForbiddenResponse({ type: ErrorBodyView })
  async listAdminTokens(
    @CurrentAdmin() admin: AdminPrincipal,
    @Query() query: ListAdminTokensQuery,
  ): Promise<AdminTokenView[]> {
    const orgId = this.reachableOrg(admin, query.orgId);
    return (await this.tokens.listAdminTokens({ orgId, includeRevoked: query.includeRevoked === 'true' })).map(
      toAdminTokenView,
    );
  }

  @Get(':tokenId')
  @ApiOperation({ summary: 'Get an admin token (never its secret)' })
  @ApiOkResponse({ type: AdminTokenView })
  @ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown token, or another organization’s' })
  async getAdminToken(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('tokenId') tokenId: string,
  ): Promise<AdminTokenView> {
    return toAdminTokenView(await this.tokens.getAdminToken(tokenId, this.reachableOrg(admin)));
  }

  @Patch(':tokenId')
  @ApiOperation({ summary: 'Rename an admin token, set who holds it, or change its expiry (null: never)' })
  @ApiOkResponse({ type: AdminTokenView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  @ApiNotFoundResponse({ type: ErrorBodyView })
  async updateAdminToken(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('tokenId') tokenId: string,
    @Body() dto: UpdateAdminTokenDto,
  ): Promise<AdminTokenView> {
    const { before, after } = await this.tokens.updateAdminToken(tokenId, this.reachableOrg(admin), {
      name: dto.name,
      ownerLabel: dto.ownerLabel,
      expiresAt: dto.expiresAt === undefined ? undefined : dto.expiresAt === null ? null : new Date(dto.expiresAt),
    });
    await this.audit.record(admin, {
      orgId: after.orgId,
      action: 'admin-token.updated',
      targetType: 'admin-token',
      targetId: tokenId,
      details: changes(before, after, ['name', 'ownerLabel', 'expiresAt']),
    });
    return toAdminTokenView(after);
  }

  @Delete(':tokenId')
  @ApiOperation({ summary: 'Revoke an admin token: refused from its next request on' })
  @ApiOkResponse({ type: AdminTokenView })
  @ApiNotFoundResponse({ type: ErrorBodyView })
  async revokeAdminToken(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('tokenId') tokenId: string,
  ): Promise<AdminTokenView> {
    const token = await this.tokens.revokeAdminToken(tokenId, this.reachableOrg(admin));
    await this.audit.record(admin, {
      orgId: token.orgId,
      action: 'admin-token.revoked',
      targetType: 'admin-token',
      targetId: tokenId,
      details: { name: token.name, prefix: token.prefix, role: token.role },
    });
    return toAdminTokenView(token);
  }

  /**
   * The org whose tokens the caller manages: any (undefined) or the one asked for a platform admin,
   * its own for an org admin (another org's id is not found, as everywhere); nobody else.
   */
  private reachableOrg(admin: AdminPrincipal, asked?: string): string | undefined {
    if (admin.role === 'PLATFORM_ADMIN') return asked;
    if (admin.role !== 'ORG_ADMIN' || !admin.orgId)
      throw new ForbiddenException(
        `role ${admin.role} may not manage admin tokens; it needs ORG_ADMIN or PLATFORM_ADMIN`,
      );
    if (asked && asked !== admin.orgId)
      throw new IdentityException(IdentityExceptionCode.OrgNotFound, `organization ${asked} not found`, 'orgId');
    return admin.orgId;
  }
}
