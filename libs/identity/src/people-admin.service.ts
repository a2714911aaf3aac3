import { Injectable } from '@nestjs/common';
import { AuditedBy, recordAudited } from '@tollgate/audit';
import { Prisma, PrismaService, Team, TeamMember, User } from '@tollgate/db';
import { RedisService } from '@tollgate/redis';
import { IdentityException, IdentityExceptionCode } from './identity.exception';
import { EmailDomainService } from './email-domain.service';
import { IdentityService, KEY_REVOKED_CHANNEL } from './identity.service';

/** What offboarding revoked in identity (connections are the connections lib's). */
/** A person's organisation-wide role (null: only what their memberships give). */
export type OrgWideRole = 'ORG_ADMIN' | 'FINANCE' | null;

/** A person's organisation-wide role before and after it was set. */
export interface OrgRoleChange {
  userId: string;
  from: OrgWideRole;
  to: OrgWideRole;
}

/** A row before and after a change. */
export interface Changed<T> {
  before: T;
  after: T;
}

export interface TeamAdminSet {
  member: TeamMember;
  revokedAdminTokenIds: string[];
}

export interface RemovedMember {
  revokedKeyIds: string[];
  revokedAdminTokenIds: string[];
}

export interface MovedUser {
  member: TeamMember;
  movedKeyIds: string[];
  revokedKeyIds: string[];
  revokedAdminTokenIds: string[];
}

export interface OffboardedIdentity {
  offboardedAt: Date;
  revokedKeyIds: string[];
  revokedAdminTokenIds: string[];
  removedFromTeamIds: string[];
}

/**
 * Day-2 changes of teams, users and memberships, and the identity part of offboarding. Every
 * change that ends a way in publishes the keys on KEY_REVOKED_CHANNEL, so edges drop them at once.
 */
@Injectable()
export class PeopleAdminService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
    private readonly identity: IdentityService,
    private readonly emailDomains: EmailDomainService,
  ) {}

  async getOrgRole(orgId: string, userId: string): Promise<OrgWideRole> {
    return (await orgRoleOf(this.prisma, orgId, userId)).orgRole;
  }

  /** Grants or withdraws a person's organisation-wide role; an offboarded person can only lose one. */
  async setOrgRole(
    orgId: string,
    userId: string,
    role: OrgWideRole,
    audit: AuditedBy<OrgRoleChange>,
  ): Promise<OrgWideRole> {
    return this.prisma.$transaction(async (tx) => {
      const before = await orgRoleOf(tx, orgId, userId);
      if (before.offboardedAt && role !== null)
        throw new IdentityException(IdentityExceptionCode.UserOffboarded, `user ${userId} is offboarded`, 'userId');
      await tx.user.updateMany({ where: { id: userId, orgId }, data: { orgRole: role } });
      await recordAudited(tx, audit, { userId, from: before.orgRole, to: role });
      return role;
    });
  }

  async listMembers(orgId: string, teamId: string): Promise<TeamMember[]> {
    await this.identity.getTeam(orgId, teamId);
    return this.prisma.teamMember.findMany({ where: { orgId, teamId }, orderBy: { createdAt: 'asc' } });
  }

  async renameTeam(
    orgId: string,
    teamId: string,
    name: string,
    audit: AuditedBy<Changed<Team>>,
  ): Promise<Changed<Team>> {
    const before = await this.identity.getTeam(orgId, teamId);
    try {
      return await this.prisma.$transaction(async (tx) => {
        const renamed = { before, after: await tx.team.update({ where: { id: teamId }, data: { name } }) };
        await recordAudited(tx, audit, renamed);
        return renamed;
      });
    } catch (err) {
      throw conflictOr(err, 'name', `a team named "${name}" already exists`);
    }
  }

  async updateUser(
    orgId: string,
    userId: string,
    input: { name?: string | null; email?: string },
    audit: AuditedBy<Changed<User>>,
  ): Promise<Changed<User>> {
    const before = await this.identity.getUser(orgId, userId);
    if (input.email !== undefined) await this.emailDomains.assertMayUse(orgId, input.email);
    try {
      return await this.prisma.$transaction(async (tx) => {
        const updated = { before, after: await tx.user.update({ where: { id: userId }, data: input }) };
        await recordAudited(tx, audit, updated);
        return updated;
      });
    } catch (err) {
      throw conflictOr(err, 'email', `a user with email "${input.email}" already exists`);
    }
  }

  /** Makes a member a team admin or not; a demoted admin's TEAM_ADMIN tokens for the team are revoked. */
  async setTeamAdmin(
    orgId: string,
    teamId: string,
    userId: string,
    isTeamAdmin: boolean,
    audit: AuditedBy<TeamAdminSet>,
  ): Promise<TeamAdminSet> {
    await this.membership(orgId, teamId, userId);
    return this.prisma.$transaction(async (tx) => {
      const member = await tx.teamMember.update({
        where: { teamId_userId: { teamId, userId } },
        data: { isTeamAdmin },
      });
      const revokedAdminTokenIds = isTeamAdmin ? [] : await revokeTeamAdminTokens(tx, orgId, userId, teamId);
      const set = { member, revokedAdminTokenIds };
      await recordAudited(tx, audit, set);
      return set;
    });
  }

  /**
   * Removes a user from a team: their live keys in the team are revoked (a key spends for its team,
   * and its owner no longer belongs to it) and their TEAM_ADMIN tokens for the team too.
   */
  async removeMember(
    orgId: string,
    teamId: string,
    userId: string,
    audit: AuditedBy<RemovedMember>,
  ): Promise<RemovedMember> {
    await this.membership(orgId, teamId, userId);
    const result = await this.prisma.$transaction(async (tx) => {
      await tx.teamMember.deleteMany({ where: { orgId, teamId, userId } });
      const revokedKeyIds = await revokeKeys(tx, { orgId, teamId, userId });
      const revokedAdminTokenIds = await revokeTeamAdminTokens(tx, orgId, userId, teamId);
      const removed = { revokedKeyIds, revokedAdminTokenIds };
      await recordAudited(tx, audit, removed);
      return removed;
    });
    await this.announceRevoked(result.revokedKeyIds);
    return result;
  }

  /**
   * Moves a user from one team to another in one transaction: the membership, and (unless told
   * otherwise) their live keys, which spend for the new team from the next call on. Past spend
   * stays with the old team in the ledger. TEAM_ADMIN tokens for the old team are revoked.
   */
  async moveUser(
    orgId: string,
    userId: string,
    input: { fromTeamId: string; toTeamId: string; isTeamAdmin?: boolean; moveKeys?: boolean },
    audit: AuditedBy<MovedUser>,
  ): Promise<MovedUser> {
    if (input.fromTeamId === input.toTeamId) {
      throw new IdentityException(IdentityExceptionCode.Conflict, 'toTeamId must differ from fromTeamId', 'toTeamId');
    }
    await this.identity.getActiveUser(orgId, userId);
    await this.membership(orgId, input.fromTeamId, userId);
    await this.identity.getTeam(orgId, input.toTeamId);
    const result = await this.prisma.$transaction(async (tx) => {
      await tx.teamMember.deleteMany({ where: { orgId, teamId: input.fromTeamId, userId } });
      const member = await tx.teamMember.upsert({
        where: { teamId_userId: { teamId: input.toTeamId, userId } },
        create: { orgId, teamId: input.toTeamId, userId, isTeamAdmin: input.isTeamAdmin ?? false },
        update: input.isTeamAdmin === undefined ? {} : { isTeamAdmin: input.isTeamAdmin },
      });
      const keys = await tx.virtualKey.findMany({
        where: { orgId, teamId: input.fromTeamId, userId, revokedAt: null },
        select: { id: true },
      });
      const keyIds = keys.map((k) => k.id);
      if (input.moveKeys === false) {
        await tx.virtualKey.updateMany({ where: { id: { in: keyIds } }, data: { revokedAt: new Date() } });
      } else {
        await tx.virtualKey.updateMany({ where: { id: { in: keyIds } }, data: { teamId: input.toTeamId } });
      }
      const revokedAdminTokenIds = await revokeTeamAdminTokens(tx, orgId, userId, input.fromTeamId);
      const moved = {
        member,
        movedKeyIds: input.moveKeys === false ? [] : keyIds,
        revokedKeyIds: input.moveKeys === false ? keyIds : [],
        revokedAdminTokenIds,
      };
      await recordAudited(tx, audit, moved);
      return moved;
    });
    // A moved key's cached principal names the old team: every edge drops it.
    await this.announceRevoked([...result.movedKeyIds, ...result.revokedKeyIds]);
    return result;
  }

  /**
   * Offboarding, in one transaction with its audit row: the user is marked offboarded (no new key,
   * token or membership), every live key (static and OAuth, so OAuth tokens and refreshes stop)
   * and every admin token naming them is revoked, their memberships end, and `also` runs (what
   * other libs forget of them, e.g. upstream connections). The user row, their budgets and the
   * ledger stay, so reports still show their past spend. Idempotent.
   */
  async offboardUser<T extends object>(
    orgId: string,
    userId: string,
    also: (tx: Prisma.TransactionClient) => Promise<T>,
    audit: AuditedBy<OffboardedIdentity & T>,
  ): Promise<OffboardedIdentity & T> {
    const user = await this.identity.getUser(orgId, userId);
    const result = await this.prisma.$transaction(async (tx) => {
      // Serialises with key creation, which holds the same row FOR SHARE: no key slips in after.
      await tx.$queryRaw`SELECT 1 FROM "User" WHERE "id" = ${userId}::uuid FOR UPDATE`;
      const offboardedAt = user.offboardedAt ?? new Date();
      await tx.user.update({ where: { id: userId }, data: { offboardedAt } });
      const revokedKeyIds = await revokeKeys(tx, { orgId, userId });
      const tokens = await tx.adminToken.findMany({ where: { orgId, userId, revokedAt: null }, select: { id: true } });
      await tx.adminToken.updateMany({
        where: { id: { in: tokens.map((t) => t.id) } },
        data: { revokedAt: new Date() },
      });
      const memberships = await tx.teamMember.findMany({ where: { orgId, userId }, select: { teamId: true } });
      await tx.teamMember.deleteMany({ where: { orgId, userId } });
      const done = {
        offboardedAt,
        revokedKeyIds,
        revokedAdminTokenIds: tokens.map((t) => t.id),
        removedFromTeamIds: memberships.map((m) => m.teamId),
        ...(await also(tx)),
      };
      await recordAudited(tx, audit, done);
      return done;
    });
    await this.announceRevoked(result.revokedKeyIds);
    return result;
  }

  private async membership(orgId: string, teamId: string, userId: string): Promise<TeamMember> {
    await this.identity.getTeam(orgId, teamId);
    await this.identity.getUser(orgId, userId);
    const member = await this.prisma.teamMember.findFirst({ where: { orgId, teamId, userId } });
    if (!member)
      throw new IdentityException(
        IdentityExceptionCode.UserNotFound,
        `user ${userId} is not a member of team ${teamId}`,
        'userId',
      );
    return member;
  }

  private async announceRevoked(keyIds: string[]): Promise<void> {
    for (const keyId of keyIds) await this.redis.publish(KEY_REVOKED_CHANNEL, keyId);
  }
}

async function revokeKeys(
  tx: Prisma.TransactionClient,
  where: { orgId: string; userId: string; teamId?: string },
): Promise<string[]> {
  const keys = await tx.virtualKey.findMany({ where: { ...where, revokedAt: null }, select: { id: true } });
  await tx.virtualKey.updateMany({
    where: { id: { in: keys.map((k) => k.id) }, revokedAt: null },
    data: { revokedAt: new Date() },
  });
  return keys.map((k) => k.id);
}

async function revokeTeamAdminTokens(
  tx: Prisma.TransactionClient,
  orgId: string,
  userId: string,
  teamId: string,
): Promise<string[]> {
  const tokens = await tx.adminToken.findMany({
    where: { orgId, userId, teamId, role: 'TEAM_ADMIN', revokedAt: null },
    select: { id: true },
  });
  await tx.adminToken.updateMany({ where: { id: { in: tokens.map((t) => t.id) } }, data: { revokedAt: new Date() } });
  return tokens.map((t) => t.id);
}

function conflictOr(err: unknown, field: string, message: string): unknown {
  if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002')
    return new IdentityException(IdentityExceptionCode.Conflict, message, field);
  return err;
}

async function orgRoleOf(
  db: Prisma.TransactionClient,
  orgId: string,
  userId: string,
): Promise<{ orgRole: OrgWideRole; offboardedAt: Date | null }> {
  const user = await db.user.findFirst({ where: { id: userId, orgId }, select: { orgRole: true, offboardedAt: true } });
  if (!user) throw new IdentityException(IdentityExceptionCode.UserNotFound, `user ${userId} not found`, 'userId');
  return user;
}
