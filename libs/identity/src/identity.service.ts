import { Inject, Injectable } from '@nestjs/common';
import { AuditedBy, recordAudited } from '@tollgate/audit';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { Organization, Prisma, PrismaService, Team, TeamMember, User } from '@tollgate/db';
import { RedisService } from '@tollgate/redis';
import { EmailDomainService } from './email-domain.service';
import { IdentityException, IdentityExceptionCode } from './identity.exception';
import { randomBytes } from 'node:crypto';
import { issueSecret } from './secret-token';
import { KeySort, keyOrderBy } from './key-sort';

export const KEY_REVOKED_CHANNEL = 'key-revoked';
/** An organisation was disabled, enabled, deleted or changed its zone: edges drop its cached principals. */
export const ORG_CHANGED_CHANNEL = 'org-changed';

export interface CreateVirtualKeyInput {
  teamId: string;
  userId: string;
  name: string;
  expiresAt?: Date | null;
  disclosureMode?: 'FULL' | 'PROGRESSIVE' | 'CODE' | 'AUTO' | null;
  tags?: string[];
  metadata?: Record<string, unknown>;
}

/** What PATCH may change on a key; absent fields stay, null clears. */
export interface UpdateVirtualKeyInput {
  name?: string;
  tags?: string[];
  metadata?: Record<string, unknown>;
  disclosureMode?: 'FULL' | 'PROGRESSIVE' | 'CODE' | 'AUTO' | null;
  expiresAt?: Date | null;
}

const KEY_PUBLIC_FIELDS = {
  id: true,
  orgId: true,
  teamId: true,
  userId: true,
  name: true,
  prefix: true,
  kind: true,
  oauthClientId: true,
  oauthClientName: true,
  disclosureMode: true,
  tags: true,
  metadata: true,
  expiresAt: true,
  revokedAt: true,
  lastUsedAt: true,
  createdAt: true,
} satisfies Prisma.VirtualKeySelect;

export type VirtualKeyView = Prisma.VirtualKeyGetPayload<{ select: typeof KEY_PUBLIC_FIELDS }>;

/** A page of keys, the total that match, every tag in reach, and the page's team and owner names. */
export interface VirtualKeyPage {
  keys: VirtualKeyView[];
  total: number;
  tags: string[];
  names: { id: string; name: string }[];
}

/** A key before and after a change. */
export interface ChangedVirtualKey {
  before: VirtualKeyView;
  after: VirtualKeyView;
}

/** Organisations, teams, users, memberships and virtual keys. Every query is scoped by org first. */
@Injectable()
export class IdentityService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
    @Inject(TOLLGATE_CONFIG) private readonly config: BaseConfig,
    private readonly emailDomains: EmailDomainService,
  ) {}

  async createOrganization(
    input: {
      name: string;
      slug: string;
      timeZone?: string;
      currency?: string;
      autoApproveTools?: boolean;
    },
    audit: AuditedBy<Organization>,
  ): Promise<Organization> {
    try {
      return await this.prisma.$transaction(async (tx) => {
        const org = await tx.organization.create({ data: input });
        await recordAudited(tx, audit, org);
        return org;
      });
    } catch (err) {
      throw conflictOr(err, 'slug', `an organization with slug "${input.slug}" already exists`);
    }
  }

  listOrganizations() {
    return this.prisma.organization.findMany({ where: { deletedAt: null }, orderBy: { createdAt: 'asc' } });
  }

  /** A live organisation (a deleted one is not found; a disabled one is, so it can be enabled again). */
  async getOrganization(orgId: string) {
    const org = await this.prisma.organization.findUnique({ where: { id: orgId } });
    if (!org || org.deletedAt)
      throw new IdentityException(IdentityExceptionCode.OrgNotFound, `organization ${orgId} not found`);
    return org;
  }

  async createTeam(orgId: string, input: { name: string }, audit: AuditedBy<Team>): Promise<Team> {
    await this.getOrganization(orgId);
    try {
      return await this.prisma.$transaction(async (tx) => {
        const team = await tx.team.create({ data: { orgId, name: input.name } });
        await recordAudited(tx, audit, team);
        return team;
      });
    } catch (err) {
      throw conflictOr(err, 'name', `a team named "${input.name}" already exists`);
    }
  }

  listTeams(orgId: string) {
    return this.prisma.team.findMany({ where: { orgId }, orderBy: { createdAt: 'asc' } });
  }

  async getTeam(orgId: string, teamId: string) {
    const team = await this.prisma.team.findFirst({ where: { orgId, id: teamId } });
    if (!team) throw new IdentityException(IdentityExceptionCode.TeamNotFound, `team ${teamId} not found`, 'teamId');
    return team;
  }

  async createUser(orgId: string, input: { email: string; name?: string }, audit: AuditedBy<User>): Promise<User> {
    await this.getOrganization(orgId);
    await this.emailDomains.assertMayUse(orgId, input.email);
    try {
      return await this.prisma.$transaction(async (tx) => {
        const user = await tx.user.create({ data: { orgId, email: input.email, name: input.name } });
        await recordAudited(tx, audit, user);
        return user;
      });
    } catch (err) {
      throw conflictOr(err, 'email', `a user with email "${input.email}" already exists`);
    }
  }

  listUsers(orgId: string) {
    return this.prisma.user.findMany({ where: { orgId }, orderBy: { createdAt: 'asc' } });
  }

  async getUser(orgId: string, userId: string) {
    const user = await this.prisma.user.findFirst({ where: { orgId, id: userId } });
    if (!user) throw new IdentityException(IdentityExceptionCode.UserNotFound, `user ${userId} not found`, 'userId');
    return user;
  }

  /** A user who has not been offboarded: only they get new keys, tokens and memberships. */
  async getActiveUser(orgId: string, userId: string) {
    const user = await this.getUser(orgId, userId);
    if (user.offboardedAt)
      throw new IdentityException(
        IdentityExceptionCode.UserOffboarded,
        `user ${userId} was offboarded on ${user.offboardedAt.toISOString()}`,
        'userId',
      );
    return user;
  }

  async addTeamMember(
    orgId: string,
    teamId: string,
    input: { userId: string; isTeamAdmin?: boolean },
    audit: AuditedBy<TeamMember>,
  ): Promise<TeamMember> {
    await this.getTeam(orgId, teamId);
    await this.getActiveUser(orgId, input.userId);
    return this.prisma.$transaction(async (tx) => {
      const member = await tx.teamMember.upsert({
        where: { teamId_userId: { teamId, userId: input.userId } },
        create: { orgId, teamId, userId: input.userId, isTeamAdmin: input.isTeamAdmin ?? false },
        update: { isTeamAdmin: input.isTeamAdmin ?? false },
      });
      await recordAudited(tx, audit, member);
      return member;
    });
  }

  /** Creates a key; the returned `secret` is the only time the secret exists outside its owner. */
  async createVirtualKey(
    orgId: string,
    input: CreateVirtualKeyInput,
    audit: AuditedBy<VirtualKeyView>,
  ): Promise<{ key: VirtualKeyView; secret: string }> {
    await this.getTeam(orgId, input.teamId);
    await this.getActiveUser(orgId, input.userId);
    const member = await this.prisma.teamMember.findFirst({
      where: { orgId, teamId: input.teamId, userId: input.userId },
    });
    if (!member) {
      throw new IdentityException(
        IdentityExceptionCode.NotATeamMember,
        `user ${input.userId} is not a member of team ${input.teamId}`,
        'userId',
      );
    }
    const issued = issueSecret('tg', this.config.security.keyHashSecret);
    const key = await this.prisma.$transaction(async (tx) => {
      await lockActiveUser(tx, orgId, input.userId);
      const created = await tx.virtualKey.create({
        data: {
          orgId,
          teamId: input.teamId,
          userId: input.userId,
          name: input.name,
          prefix: issued.prefix,
          secretHash: issued.hash,
          expiresAt: input.expiresAt ?? null,
          disclosureMode: input.disclosureMode ?? null,
          tags: input.tags ?? [],
          metadata: (input.metadata ?? {}) as Prisma.InputJsonObject,
        },
        select: KEY_PUBLIC_FIELDS,
      });
      await recordAudited(tx, audit, created);
      return created;
    });
    return { key, secret: issued.secret };
  }

  /**
   * The key of kind OAUTH that stands for what a user authorised a client to do in a team: one
   * per user, team and client, reused when the user authorises the same client again (so its
   * budgets, limits and ledger carry over); a revoked one is replaced by a new key.
   */
  async findOrCreateOAuthKey(
    orgId: string,
    input: { userId: string; teamId: string; clientId: string; clientName: string },
    db: Prisma.TransactionClient,
  ): Promise<VirtualKeyView> {
    // Holds the user row FOR SHARE, as a static key's creation does: offboarding (FOR UPDATE) waits,
    // and no key is made for a person being offboarded.
    await lockActiveUser(db, orgId, input.userId);
    const member = await db.teamMember.findFirst({
      where: { orgId, teamId: input.teamId, userId: input.userId },
    });
    if (!member) {
      throw new IdentityException(
        IdentityExceptionCode.NotATeamMember,
        `user ${input.userId} is not a member of team ${input.teamId}`,
        'teamId',
      );
    }
    const where = {
      orgId,
      userId: input.userId,
      teamId: input.teamId,
      kind: 'OAUTH' as const,
      oauthClientId: input.clientId,
      revokedAt: null,
    };
    const existing = await db.virtualKey.findFirst({ where, select: KEY_PUBLIC_FIELDS });
    if (existing) return existing;
    return db.virtualKey.create({
      data: {
        orgId,
        teamId: input.teamId,
        userId: input.userId,
        kind: 'OAUTH',
        oauthClientId: input.clientId,
        oauthClientName: input.clientName,
        name: `OAuth: ${input.clientName}`.slice(0, 200),
        prefix: 'oauth',
        // No secret exists for an OAuth key: its tokens come from the authorization server.
        secretHash: `oauth:${randomBytes(24).toString('hex')}`,
      },
      select: KEY_PUBLIC_FIELDS,
    });
  }

  /** A live OAuth key, or null when it is revoked, expired or gone (checked when a token is refreshed). */
  async findLiveOAuthKey(keyId: string): Promise<VirtualKeyView | null> {
    const key = await this.prisma.virtualKey.findFirst({
      where: { id: keyId, kind: 'OAUTH', revokedAt: null },
      select: KEY_PUBLIC_FIELDS,
    });
    if (!key || (key.expiresAt && key.expiresAt.getTime() <= Date.now())) return null;
    return key;
  }

  listVirtualKeys(orgId: string, filter: { teamId?: string; userId?: string } = {}) {
    return this.prisma.virtualKey.findMany({
      where: { orgId, ...filter },
      select: KEY_PUBLIC_FIELDS,
      orderBy: { createdAt: 'asc' },
    });
  }

  /**
   * One page of the keys within `filter` (oldest first, as the full list, unless `sort` orders them), matching `search` (name, prefix, tag, OAuth
   * client, team name, owner's name or email; case-insensitive) and `tag`; only usable keys unless
   * `inactive`; only `ids` when given. With the total that match, every tag within `filter`, and the names of the page's
   * teams and owners: what a console lists without reading every key of a large organisation.
   */
  async pageVirtualKeys(
    orgId: string,
    filter: { teamId?: string; userId?: string },
    query: {
      search?: string;
      tag?: string;
      /** Only these keys (those a page names), still within `filter`. */
      ids?: string[];
      inactive?: boolean;
      sort?: KeySort;
      limit: number;
      offset: number;
      now: Date;
    },
  ): Promise<VirtualKeyPage> {
    const search = query.search?.trim();
    const contains = search ? { contains: search, mode: 'insensitive' as const } : undefined;
    const where: Prisma.VirtualKeyWhereInput = {
      orgId,
      ...filter,
      ...(query.tag ? { tags: { has: query.tag } } : {}),
      ...(query.ids ? { id: { in: query.ids } } : {}),
      ...(query.inactive ? {} : { revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: query.now } }] }),
      ...(contains
        ? {
            AND: [
              {
                OR: [
                  { name: contains },
                  { prefix: contains },
                  { oauthClientName: contains },
                  { tags: { has: search } },
                  { team: { name: contains } },
                  { user: { OR: [{ name: contains }, { email: contains }] } },
                ],
              },
            ],
          }
        : {}),
    };
    const [keys, total, tagRows] = await Promise.all([
      this.prisma.virtualKey.findMany({
        where,
        select: {
          ...KEY_PUBLIC_FIELDS,
          team: { select: { name: true } },
          user: { select: { name: true, email: true } },
        },
        orderBy: [...keyOrderBy(query.sort), { createdAt: 'asc' }, { id: 'asc' }],
        take: query.limit,
        skip: query.offset,
      }),
      this.prisma.virtualKey.count({ where }),
      this.prisma.$queryRaw<{ tag: string }[]>`
        SELECT DISTINCT unnest("tags") AS "tag" FROM "VirtualKey"
        WHERE "orgId" = ${orgId}::uuid
          AND (${filter.teamId ?? null}::uuid IS NULL OR "teamId" = ${filter.teamId ?? null}::uuid)
          AND (${filter.userId ?? null}::uuid IS NULL OR "userId" = ${filter.userId ?? null}::uuid)
        ORDER BY 1`,
    ]);
    const names = new Map<string, string>();
    for (const k of keys) {
      names.set(k.teamId, k.team.name);
      names.set(k.userId, k.user.name ?? k.user.email);
    }
    return {
      keys: keys.map(({ team: _team, user: _user, ...key }) => key),
      total,
      tags: tagRows.map((r) => r.tag),
      names: [...names].map(([id, name]) => ({ id, name })),
    };
  }

  async getVirtualKey(orgId: string, keyId: string): Promise<VirtualKeyView> {
    const key = await this.prisma.virtualKey.findFirst({ where: { orgId, id: keyId }, select: KEY_PUBLIC_FIELDS });
    if (!key) throw new IdentityException(IdentityExceptionCode.KeyNotFound, `key ${keyId} not found`, 'keyId');
    return key;
  }

  /**
   * Changes a key's name, tags, metadata, disclosure mode or expiry; every edge drops its cached
   * principal, so the next request (and the next session) sees the change. A revoked key is final.
   */
  async updateVirtualKey(
    orgId: string,
    keyId: string,
    input: UpdateVirtualKeyInput,
    audit: AuditedBy<ChangedVirtualKey>,
  ): Promise<ChangedVirtualKey> {
    const before = await this.getVirtualKey(orgId, keyId);
    const after = await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.virtualKey.updateMany({
        where: { id: keyId, orgId, revokedAt: null },
        data: {
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.tags !== undefined ? { tags: input.tags } : {}),
          ...(input.metadata !== undefined ? { metadata: input.metadata as Prisma.InputJsonObject } : {}),
          ...(input.disclosureMode !== undefined ? { disclosureMode: input.disclosureMode } : {}),
          ...(input.expiresAt !== undefined ? { expiresAt: input.expiresAt } : {}),
        },
      });
      if (count === 0)
        throw new IdentityException(
          IdentityExceptionCode.KeyRevoked,
          `key ${keyId} is revoked and cannot be changed`,
          'keyId',
        );
      const changed = await tx.virtualKey.findFirstOrThrow({ where: { orgId, id: keyId }, select: KEY_PUBLIC_FIELDS });
      await recordAudited(tx, audit, { before, after: changed });
      return changed;
    });
    await this.redis.publish(KEY_REVOKED_CHANNEL, keyId);
    return { before, after };
  }

  /** Revokes a key (again: a no-op, still audited) and tells every edge replica to drop it from its cache at once. */
  async revokeVirtualKey(orgId: string, keyId: string, audit: AuditedBy<VirtualKeyView>): Promise<VirtualKeyView> {
    const existing = await this.getVirtualKey(orgId, keyId);
    const key = await this.prisma.$transaction(async (tx) => {
      const revoked = existing.revokedAt
        ? existing
        : await tx.virtualKey.update({
            where: { id: keyId },
            data: { revokedAt: new Date() },
            select: KEY_PUBLIC_FIELDS,
          });
      await recordAudited(tx, audit, revoked);
      return revoked;
    });
    await this.redis.publish(KEY_REVOKED_CHANNEL, keyId);
    return key;
  }

  /**
   * Gives a key a new secret under the same id (so its budgets, policies, limits and ledger carry
   * over) and tells every edge to drop the old one at once. A revoked key cannot be rotated.
   */
  async rotateVirtualKey(
    orgId: string,
    keyId: string,
    audit: AuditedBy<ChangedVirtualKey>,
  ): Promise<{ key: VirtualKeyView; secret: string }> {
    const existing = await this.getVirtualKey(orgId, keyId);
    if (existing.revokedAt) {
      throw new IdentityException(
        IdentityExceptionCode.KeyRevoked,
        `key ${keyId} is revoked and cannot be rotated; create a new key`,
        'keyId',
      );
    }
    if (existing.kind === 'OAUTH') {
      throw new IdentityException(
        IdentityExceptionCode.Conflict,
        `key ${keyId} is an OAuth key: it has no secret to rotate (revoke it and authorise the client again)`,
        'keyId',
      );
    }
    const issued = issueSecret('tg', this.config.security.keyHashSecret);
    // Guarded on revokedAt so a revoke racing this rotation is never undone by it.
    const key = await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.virtualKey.updateMany({
        where: { id: keyId, orgId, revokedAt: null },
        data: { prefix: issued.prefix, secretHash: issued.hash },
      });
      if (count === 0) {
        throw new IdentityException(
          IdentityExceptionCode.KeyRevoked,
          `key ${keyId} is revoked and cannot be rotated; create a new key`,
          'keyId',
        );
      }
      const rotated = await tx.virtualKey.findFirstOrThrow({ where: { orgId, id: keyId }, select: KEY_PUBLIC_FIELDS });
      await recordAudited(tx, audit, { before: existing, after: rotated });
      return rotated;
    });
    await this.redis.publish(KEY_REVOKED_CHANNEL, keyId);
    return { key, secret: issued.secret };
  }
}

/** Holds the user's row FOR SHARE until the transaction ends, so offboarding (FOR UPDATE) waits; refuses an offboarded user. */
async function lockActiveUser(tx: Prisma.TransactionClient, orgId: string, userId: string): Promise<void> {
  const rows = await tx.$queryRaw<
    { offboardedAt: Date | null }[]
  >`SELECT "offboardedAt" FROM "User" WHERE "id" = ${userId}::uuid AND "orgId" = ${orgId}::uuid FOR SHARE`;
  if (rows.length === 0)
    throw new IdentityException(IdentityExceptionCode.UserNotFound, `user ${userId} not found`, 'userId');
  if (rows[0].offboardedAt)
    throw new IdentityException(IdentityExceptionCode.UserOffboarded, `user ${userId} was offboarded`, 'userId');
}

function conflictOr(err: unknown, field: string, message: string): unknown {
  if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
    return new IdentityException(IdentityExceptionCode.Conflict, message, field);
  }
  return err;
}
