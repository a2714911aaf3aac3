import { Inject, Injectable, Logger } from '@nestjs/common';
import { AuditedBy, recordAudited } from '@tollgate/audit';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { AdminToken, Prisma, PrismaService } from '@tollgate/db';
import { CLOCK, Clock } from '@tollgate/kernel';
import { IdentityException, IdentityExceptionCode } from './identity.exception';
import { AdminActor, AdminPrincipal } from './principal';
import { constantTimeEqual, hashSecret, issueSecret } from './secret-token';

export const BOOTSTRAP_TOKEN_ID = 'bootstrap';

const LAST_USED_WRITE_INTERVAL_MS = 60_000;

/** An admin token as listed: never its secret or hash; its owner resolved to a person when it names one. */
export type AdminTokenListing = Omit<AdminToken, 'secretHash'> & {
  owner: { id: string; name: string | null; email: string } | null;
};

/** A token just issued: its secret exists only here. */
export interface IssuedAdminToken {
  id: string;
  prefix: string;
  secret: string;
  expiresAt: Date | null;
}

/** Which tokens a list shows: one org's, or (platform admins) every token. */
export type AdminTokenFilter = { orgId?: string | null; includeRevoked?: boolean };

/** Bearer tokens of the admin API. The bootstrap token from config is a platform admin. */
@Injectable()
export class AdminTokenService {
  private readonly logger = new Logger(AdminTokenService.name);
  private readonly lastUsedWrites = new Map<string, number>();

  constructor(
    private readonly prisma: PrismaService,
    @Inject(TOLLGATE_CONFIG) private readonly config: BaseConfig,
    // What a token's expiry is read against (a test moves it instead of waiting).
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async createAdminToken(
    input: {
      role: AdminPrincipal['role'];
      orgId: string | null;
      teamId?: string | null;
      userId?: string | null;
      name: string;
      ownerLabel?: string | null;
      expiresAt?: Date | null;
    },
    audit: AuditedBy<IssuedAdminToken>,
  ): Promise<IssuedAdminToken> {
    const issued = issueSecret('tga', this.config.security.keyHashSecret);
    return this.prisma.$transaction(async (tx) => {
      const token = await tx.adminToken.create({
        data: {
          role: input.role,
          orgId: input.orgId,
          teamId: input.teamId ?? null,
          userId: input.userId ?? null,
          name: input.name,
          ownerLabel: input.ownerLabel ?? null,
          expiresAt: input.expiresAt ?? null,
          prefix: issued.prefix,
          secretHash: issued.hash,
        },
      });
      const created = { id: token.id, prefix: token.prefix, secret: issued.secret, expiresAt: token.expiresAt };
      // The secret never reaches the trail: the entry is built from the token's id and prefix (and scrubbed).
      await recordAudited(tx, audit, created);
      return created;
    });
  }

  async resolveAdminToken(secret: string, bootstrapToken: string | undefined): Promise<AdminPrincipal | null> {
    if (bootstrapToken && constantTimeEqual(secret, bootstrapToken)) {
      const actor: AdminActor = {
        tokenId: BOOTSTRAP_TOKEN_ID,
        tokenName: 'bootstrap token',
        tokenPrefix: null,
        role: 'PLATFORM_ADMIN',
        user: null,
        ownerLabel: 'the operator (BOOTSTRAP_ADMIN_TOKEN)',
      };
      return { tokenId: BOOTSTRAP_TOKEN_ID, role: 'PLATFORM_ADMIN', orgId: null, teamId: null, userId: null, actor };
    }
    if (!secret.startsWith('tga_')) return null;
    const token = await this.prisma.adminToken.findUnique({
      where: { secretHash: hashSecret(secret, this.config.security.keyHashSecret) },
    });
    const now = this.clock.now();
    if (!token || token.revokedAt || (token.expiresAt && token.expiresAt.getTime() <= now)) return null;
    const user = token.userId
      ? await this.prisma.user.findUnique({
          where: { id: token.userId },
          select: { id: true, name: true, email: true },
        })
      : null;
    this.touchLastUsed(token.id, now);
    const actor: AdminActor = {
      tokenId: token.id,
      tokenName: token.name,
      tokenPrefix: token.prefix,
      role: token.role,
      user,
      ownerLabel: token.ownerLabel,
    };
    return {
      tokenId: token.id,
      role: token.role,
      orgId: token.orgId,
      teamId: token.teamId,
      userId: token.userId,
      actor,
    };
  }

  /** Tokens, newest first, with their owner; never a secret. */
  async listAdminTokens(filter: AdminTokenFilter): Promise<AdminTokenListing[]> {
    const where: Prisma.AdminTokenWhereInput = {
      ...(filter.orgId !== undefined ? { orgId: filter.orgId } : {}),
      ...(filter.includeRevoked ? {} : { revokedAt: null }),
    };
    const tokens = await this.prisma.adminToken.findMany({
      where,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      omit: { secretHash: true },
    });
    const userIds = [...new Set(tokens.map((t) => t.userId).filter((id): id is string => id !== null))];
    const users = await this.prisma.user.findMany({
      where: { id: { in: userIds } },
      select: { id: true, name: true, email: true },
    });
    const byId = new Map(users.map((u) => [u.id, u]));
    return tokens.map((t) => ({ ...t, owner: t.userId ? (byId.get(t.userId) ?? null) : null }));
  }

  /** One token, or ADMIN_TOKEN_NOT_FOUND; `orgId` scopes the look-up (undefined: any token, for platform admins). */
  getAdminToken(tokenId: string, orgId?: string | null): Promise<AdminTokenListing> {
    return adminTokenListing(this.prisma, tokenId, orgId);
  }

  /** Revokes a token (again: a no-op, still audited); it is refused from the next request on (tokens are read from the database each time). */
  async revokeAdminToken(
    tokenId: string,
    orgId: string | null | undefined,
    audit: AuditedBy<AdminTokenListing>,
  ): Promise<AdminTokenListing> {
    await this.getAdminToken(tokenId, orgId);
    return this.prisma.$transaction(async (tx) => {
      await tx.adminToken.updateMany({
        where: { id: tokenId, revokedAt: null },
        data: { revokedAt: new Date() },
      });
      const token = await adminTokenListing(tx, tokenId, orgId);
      await recordAudited(tx, audit, token);
      return token;
    });
  }

  /** Changes a live token's name, owner label or expiry (null: never expires). */
  async updateAdminToken(
    tokenId: string,
    orgId: string | null | undefined,
    input: { name?: string; ownerLabel?: string | null; expiresAt?: Date | null },
    audit: AuditedBy<ChangedAdminToken>,
  ): Promise<ChangedAdminToken> {
    const before = await this.getAdminToken(tokenId, orgId);
    return this.prisma.$transaction(async (tx) => {
      const { count } = await tx.adminToken.updateMany({ where: { id: tokenId, revokedAt: null }, data: input });
      if (count === 0)
        throw new IdentityException(
          IdentityExceptionCode.Conflict,
          `admin token ${tokenId} is revoked and cannot be changed`,
          'tokenId',
        );
      const changed = { before, after: await adminTokenListing(tx, tokenId, orgId) };
      await recordAudited(tx, audit, changed);
      return changed;
    });
  }

  /** At most one write a minute per token and process, off the request's path. */
  private touchLastUsed(tokenId: string, now: number): void {
    const last = this.lastUsedWrites.get(tokenId) ?? 0;
    if (now - last < LAST_USED_WRITE_INTERVAL_MS) return;
    if (this.lastUsedWrites.size > 10_000) this.lastUsedWrites.clear();
    this.lastUsedWrites.set(tokenId, now);
    this.prisma.adminToken
      .update({ where: { id: tokenId }, data: { lastUsedAt: new Date(now) } })
      .catch((err: Error) => this.logger.warn(`could not record last use of admin token ${tokenId}: ${err.message}`));
  }
}

/** A token before and after a change. */
export interface ChangedAdminToken {
  before: AdminTokenListing;
  after: AdminTokenListing;
}

async function adminTokenListing(
  db: Prisma.TransactionClient,
  tokenId: string,
  orgId?: string | null,
): Promise<AdminTokenListing> {
  const token = await db.adminToken.findFirst({
    where: { id: tokenId, ...(orgId !== undefined ? { orgId } : {}) },
    omit: { secretHash: true },
  });
  if (!token)
    throw new IdentityException(
      IdentityExceptionCode.AdminTokenNotFound,
      `admin token ${tokenId} not found`,
      'tokenId',
    );
  const owner = token.userId
    ? await db.user.findUnique({
        where: { id: token.userId },
        select: { id: true, name: true, email: true },
      })
    : null;
  return { ...token, owner };
}
