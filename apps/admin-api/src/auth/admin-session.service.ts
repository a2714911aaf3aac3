import { Inject, Injectable } from '@nestjs/common';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { AdminConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { Prisma, PrismaService } from '@tollgate/db';
import { AdminActor, AdminPrincipal } from '@tollgate/identity';
import { SessionRole, sessionRolesOf } from './session-roles';

const RENEW_GRANULARITY_MS = 5_000;

/** How a session was opened. */
export type SessionOrigin = 'org-sso' | 'platform-sso' | 'bootstrap-token';

interface StoredSession {
  /** A public handle: audit rows and logs name the session by it, never by its cookie value. */
  handle: string;
  origin: SessionOrigin;
  orgId: string | null;
  userId: string | null;
  /** Platform SSO: the verified email the platform's provider vouched for. */
  email: string | null;
  /** Bootstrap sessions: an HMAC of the token they were opened with (a rotated token ends them). */
  bootstrapMac: string | null;
  csrf: string;
  createdAt: number;
  /** Absolute end, whatever the use. */
  endsAt: number;
}

/** A live session as a request sees it. */
export interface AdminSession {
  principal: AdminPrincipal;
  csrfToken: string;
  roles: SessionRole[];
  user: { id: string; name: string | null; email: string } | null;
  origin: SessionOrigin;
  expiresAt: Date;
}

/**
 * Cookie sessions of the admin API, kept in Postgres (they survive a Redis loss, and stay out of
 * the money path's memory) so a logout or a revocation holds on every replica. The cookie carries only a random id (rows are under its hash). The person behind a
 * session is read again on every request, so role changes and offboarding apply at once.
 */
@Injectable()
export class AdminSessionService {
  private readonly idleSeconds: number;
  private readonly maxSeconds: number;

  constructor(
    private readonly prisma: PrismaService,
    @Inject(TOLLGATE_CONFIG) private readonly config: AdminConfig,
  ) {
    this.idleSeconds = config.admin.session.idleSeconds;
    this.maxSeconds = config.admin.session.maxSeconds;
  }

  get maxAgeSeconds(): number {
    return this.maxSeconds;
  }

  /** Opens a session; returns the cookie value (shown to nobody else). */
  async open(input: {
    origin: SessionOrigin;
    orgId?: string | null;
    userId?: string | null;
    email?: string | null;
    bootstrapToken?: string;
  }): Promise<{ id: string; handle: string }> {
    const id = randomBytes(32).toString('base64url');
    const now = Date.now();
    const session: StoredSession = {
      handle: randomBytes(8).toString('hex'),
      origin: input.origin,
      orgId: input.orgId ?? null,
      userId: input.userId ?? null,
      email: input.email ?? null,
      bootstrapMac: input.bootstrapToken ? this.bootstrapMac(input.bootstrapToken) : null,
      csrf: randomBytes(24).toString('base64url'),
      createdAt: now,
      endsAt: now + this.maxSeconds * 1000,
    };
    await this.prisma.adminSession.create({
      data: {
        idHash: this.key(id),
        data: session as unknown as Prisma.InputJsonObject,
        idleEndsAt: new Date(Math.min(now + this.idleSeconds * 1000, session.endsAt)),
        endsAt: new Date(session.endsAt),
      },
    });
    // Ended sessions are deleted as new ones open (no timer needed, bounded by sign-ins). idleEndsAt
    // never passes endsAt, so it alone says a session ended (and is the indexed column).
    await this.prisma.adminSession.deleteMany({ where: { idleEndsAt: { lte: new Date(now) } } });
    return { id, handle: session.handle };
  }

  /**
   * The session behind a cookie value, renewed for another idle period (never past its absolute
   * end); null when unknown, expired, or its person no longer holds a role in the organisation.
   */
  async resolve(id: string): Promise<AdminSession | null> {
    if (!/^[A-Za-z0-9_-]{20,100}$/.test(id)) return null;
    const idHash = this.key(id);
    const now = Date.now();
    const row = await this.prisma.adminSession.findUnique({ where: { idHash } });
    if (!row) return null;
    const stored = row.data as unknown as StoredSession;
    if (stored.endsAt <= now || row.idleEndsAt.getTime() <= now) {
      await this.close(id);
      return null;
    }
    const session = await this.sessionOf(stored);
    if (!session) {
      await this.close(id);
      return null;
    }
    // Renewed at most every few seconds: a burst of requests writes the row once.
    const idleEndsAt = Math.min(now + this.idleSeconds * 1000, stored.endsAt);
    if (idleEndsAt - row.idleEndsAt.getTime() > RENEW_GRANULARITY_MS)
      await this.prisma.adminSession.updateMany({ where: { idHash }, data: { idleEndsAt: new Date(idleEndsAt) } });
    return session;
  }

  async close(id: string): Promise<void> {
    await this.prisma.adminSession.deleteMany({ where: { idHash: this.key(id) } });
  }

  /** Whether the header matches the session's CSRF token (constant time). */
  csrfMatches(session: AdminSession, header: string | undefined): boolean {
    if (!header) return false;
    const a = Buffer.from(header);
    const b = Buffer.from(session.csrfToken);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  private async sessionOf(stored: StoredSession): Promise<AdminSession | null> {
    const tokenId = `session:${stored.handle}`;
    const expiresAt = new Date(stored.endsAt);
    const base = { csrfToken: stored.csrf, origin: stored.origin, expiresAt };
    if (stored.origin !== 'org-sso') {
      // A platform session lives only as long as what opened it is still configured.
      const bootstrap = this.config.admin.bootstrapToken;
      const stillValid =
        stored.origin === 'bootstrap-token'
          ? !!bootstrap && !!stored.bootstrapMac && stored.bootstrapMac === this.bootstrapMac(bootstrap)
          : !!stored.email && !!this.config.admin.platformSso?.adminEmails.includes(stored.email);
      if (!stillValid) return null;
      const ownerLabel = stored.origin === 'bootstrap-token' ? 'the operator (BOOTSTRAP_ADMIN_TOKEN)' : stored.email;
      const actor: AdminActor = {
        tokenId,
        tokenName: `session (${stored.origin})`,
        tokenPrefix: null,
        role: 'PLATFORM_ADMIN',
        user: null,
        ownerLabel,
      };
      return {
        ...base,
        principal: { tokenId, role: 'PLATFORM_ADMIN', orgId: null, teamId: null, userId: null, actor },
        roles: [],
        user: null,
      };
    }
    if (!stored.orgId || !stored.userId) return null;
    const person = await this.prisma.user.findFirst({
      where: { id: stored.userId, orgId: stored.orgId, offboardedAt: null, org: { deletedAt: null } },
      select: {
        id: true,
        name: true,
        email: true,
        orgRole: true,
        memberships: { select: { teamId: true, isTeamAdmin: true }, orderBy: { createdAt: 'asc' } },
      },
    });
    if (!person) return null;
    const { roles, acting } = sessionRolesOf({ orgRole: person.orgRole, memberships: person.memberships });
    if (!acting) return null;
    const user = { id: person.id, name: person.name, email: person.email };
    const actor: AdminActor = {
      tokenId,
      tokenName: 'session (org-sso)',
      tokenPrefix: null,
      role: acting.role,
      user,
      ownerLabel: null,
    };
    return {
      ...base,
      principal: { tokenId, role: acting.role, orgId: stored.orgId, teamId: acting.teamId, userId: person.id, actor },
      roles,
      user,
    };
  }

  private bootstrapMac(token: string): string {
    return createHmac('sha256', this.config.security.keyHashSecret)
      .update(`admin-session-bootstrap:${token}`)
      .digest('hex');
  }

  private key(id: string): string {
    return createHash('sha256').update(id).digest('hex');
  }
}
