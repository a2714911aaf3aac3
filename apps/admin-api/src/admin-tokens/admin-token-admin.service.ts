import { Injectable } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { AdminPrincipal, AdminTokenService, auditBy, IdentityService } from '@tollgate/identity';
import { changes } from '../audit/audit-changes';
import { FieldValidationException } from '../common/errors/field-validation.exception';
import { decideTeamAdminHolder } from './admin-token-grant';
import { AdminTokenView, toAdminTokenView } from './admin-token.view';
import { CreateAdminTokenDto, UpdateAdminTokenDto } from './create-admin-token.dto';
import { IssuedAdminTokenView } from './issued-admin-token.view';

/** The admin-token routes' use cases; the identity lib writes each audit row in the change's transaction. */
@Injectable()
export class AdminTokenAdminService {
  constructor(
    private readonly tokens: AdminTokenService,
    private readonly identity: IdentityService,
    private readonly prisma: PrismaService,
  ) {}

  /** Issues a token the caller was granted (`orgId`: the org it acts in, null for a platform token). */
  async issue(admin: AdminPrincipal, orgId: string | null, dto: CreateAdminTokenDto): Promise<IssuedAdminTokenView> {
    if (orgId) {
      await this.identity.getOrganization(orgId);
      if (dto.teamId) await this.identity.getTeam(orgId, dto.teamId);
      if (dto.userId) await this.identity.getActiveUser(orgId, dto.userId);
      if (dto.role === 'TEAM_ADMIN' && dto.teamId && dto.userId) {
        const membership = await this.prisma.teamMember.findFirst({
          where: { orgId, teamId: dto.teamId, userId: dto.userId },
          select: { isTeamAdmin: true },
        });
        const holder = decideTeamAdminHolder(dto, membership);
        if (!holder.allowed) throw new FieldValidationException(holder.field, [holder.message]);
      }
    }
    const issued = await this.tokens.createAdminToken(
      {
        role: dto.role,
        orgId,
        teamId: dto.teamId,
        userId: dto.userId,
        name: dto.name,
        ownerLabel: dto.ownerLabel,
        expiresAt: dto.expiresAt ? new Date(dto.expiresAt) : null,
      },
      {
        by: auditBy(admin),
        entry: (created) => ({
          orgId,
          action: 'admin-token.created',
          targetType: 'admin-token',
          targetId: created.id,
          details: {
            role: dto.role,
            name: dto.name,
            prefix: created.prefix,
            teamId: dto.teamId,
            userId: dto.userId,
            ownerLabel: dto.ownerLabel,
            expiresAt: created.expiresAt,
          },
        }),
      },
    );
    return {
      id: issued.id,
      prefix: issued.prefix,
      secret: issued.secret,
      role: dto.role,
      orgId,
      name: dto.name,
      expiresAt: issued.expiresAt,
    };
  }

  /** `orgId`: the org whose tokens the caller manages (undefined: any, for a platform admin). */
  async update(
    admin: AdminPrincipal,
    tokenId: string,
    orgId: string | undefined,
    dto: UpdateAdminTokenDto,
  ): Promise<AdminTokenView> {
    const { after } = await this.tokens.updateAdminToken(
      tokenId,
      orgId,
      {
        name: dto.name,
        ownerLabel: dto.ownerLabel,
        expiresAt: dto.expiresAt === undefined ? undefined : dto.expiresAt === null ? null : new Date(dto.expiresAt),
      },
      {
        by: auditBy(admin),
        entry: (changed) => ({
          orgId: changed.after.orgId,
          action: 'admin-token.updated',
          targetType: 'admin-token',
          targetId: tokenId,
          details: changes(changed.before, changed.after, ['name', 'ownerLabel', 'expiresAt']),
        }),
      },
    );
    return toAdminTokenView(after);
  }

  async revoke(admin: AdminPrincipal, tokenId: string, orgId: string | undefined): Promise<AdminTokenView> {
    const token = await this.tokens.revokeAdminToken(tokenId, orgId, {
      by: auditBy(admin),
      entry: (revoked) => ({
        orgId: revoked.orgId,
        action: 'admin-token.revoked',
        targetType: 'admin-token',
        targetId: tokenId,
        details: { name: revoked.name, prefix: revoked.prefix, role: revoked.role },
      }),
    });
    return toAdminTokenView(token);
  }
}
