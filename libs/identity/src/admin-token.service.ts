import { Inject, Injectable } from '@nestjs/common';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { PrismaService } from '@tollgate/db';
import { AdminPrincipal } from './principal';
import { constantTimeEqual, hashSecret, issueSecret } from './secret-token';

export const BOOTSTRAP_TOKEN_ID = 'bootstrap';

/** Bearer tokens of the admin API. The bootstrap token from config is a platform admin. */
@Injectable()
export class AdminTokenService {
  constructor(
    private readonly prisma: PrismaService,
    @Inject(TOLLGATE_CONFIG) private readonly config: BaseConfig,
  ) {}

  async createAdminToken(input: {
    role: AdminPrincipal['role'];
    orgId: string | null;
    teamId?: string | null;
    userId?: string | null;
    name: string;
  }): Promise<{ id: string; prefix: string; secret: string }> {
    const issued = issueSecret('tga', this.config.security.keyHashSecret);
    const token = await this.prisma.adminToken.create({
      data: {
        role: input.role,
        orgId: input.orgId,
        teamId: input.teamId ?? null,
        userId: input.userId ?? null,
        name: input.name,
        prefix: issued.prefix,
        secretHash: issued.hash,
      },
    });
    return { id: token.id, prefix: token.prefix, secret: issued.secret };
  }

  async resolveAdminToken(secret: string, bootstrapToken: string | undefined): Promise<AdminPrincipal | null> {
    if (bootstrapToken && constantTimeEqual(secret, bootstrapToken)) {
      return { tokenId: BOOTSTRAP_TOKEN_ID, role: 'PLATFORM_ADMIN', orgId: null, teamId: null, userId: null };
    }
    if (!secret.startsWith('tga_')) return null;
    const token = await this.prisma.adminToken.findUnique({ where: { secretHash: hashSecret(secret, this.config.security.keyHashSecret) } });
    if (!token || token.revokedAt) return null;
    return { tokenId: token.id, role: token.role, orgId: token.orgId, teamId: token.teamId, userId: token.userId };
  }
}
