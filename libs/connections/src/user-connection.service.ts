import { AuditedBy, recordAudited } from '@tollgate/audit';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { refreshAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { Prisma, PrismaService, UserConnection } from '@tollgate/db';
import { RedisService } from '@tollgate/redis';
import { SecretBox } from '@tollgate/secret-box';
import { outboundExceptionIn, outboundFetch } from '@tollgate/outbound';
import { randomBytes } from 'node:crypto';
import { ConnectionsException, ConnectionsExceptionCode } from './connections.exception';
import { UpstreamOAuthService } from './upstream-oauth.service';
import { RELEASE_LOCK } from './connection-scripts';

/** What is sealed in `UserConnection.tokensEnc`. */
interface SealedTokens {
  accessToken: string;
  refreshToken?: string;
  tokenType: string;
  /** The client the tokens were issued to; a refresh must use the same one. */
  clientId: string;
}

export type ConnectionStatus = 'valid' | 'refresh_failed';

/** A connection as admins and users see it: its health, never its tokens. */
export interface ConnectionHealth {
  id: string;
  orgId: string;
  userId: string;
  upstreamId: string;
  health: 'valid' | 'expiring' | 'expired' | 'refresh_failed';
  scope: string | null;
  expiresAt: Date | null;
  canRefresh: boolean;
  lastRefreshError: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export type UserAccessToken =
  { ok: true; accessToken: string } | { ok: false; reason: 'not_connected' | 'refresh_failed' };

/** A token this close to its expiry is refreshed before use. */
const REFRESH_SKEW_MS = 30_000;
/** `expiring` in the health view. */
const EXPIRING_WITHIN_MS = 10 * 60_000;
const REFRESH_LOCK_MS = 30_000;

/**
 * One user's OAuth tokens for one upstream, sealed with AES-256-GCM and bound to that user and
 * upstream (a row copied to another user does not open). Hands out access tokens, refreshing
 * them when they are about to expire (one refresh at a time per connection, across replicas).
 */
@Injectable()
export class UserConnectionService {
  private readonly logger = new Logger(UserConnectionService.name);
  private readonly box: SecretBox;

  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
    private readonly oauth: UpstreamOAuthService,
    @Inject(TOLLGATE_CONFIG) config: BaseConfig,
  ) {
    this.box = new SecretBox(config.security.encryptionKeys);
  }

  async storeTokens(
    orgId: string,
    userId: string,
    upstreamId: string,
    tokens: OAuthTokens,
    clientId: string,
    db: Prisma.TransactionClient,
  ): Promise<UserConnection> {
    const sealed: SealedTokens = {
      accessToken: tokens.access_token,
      refreshToken: tokens.refresh_token,
      tokenType: tokens.token_type,
      clientId,
    };
    const tokensEnc = this.box.sealJson(sealed, context(orgId, userId, upstreamId));
    const data = {
      tokensEnc,
      encKeyId: SecretBox.keyIdOf(tokensEnc) ?? '',
      scope: tokens.scope ?? null,
      expiresAt: expiryOf(tokens),
      status: 'valid' satisfies ConnectionStatus,
      lastRefreshError: null,
    };
    return db.userConnection.upsert({
      where: { userId_upstreamId: { userId, upstreamId } },
      create: { orgId, userId, upstreamId, ...data },
      update: data,
    });
  }

  async listForUser(orgId: string, userId: string): Promise<ConnectionHealth[]> {
    const rows = await this.prisma.userConnection.findMany({ where: { orgId, userId }, orderBy: { createdAt: 'asc' } });
    return rows.map((r) => this.healthOf(r));
  }

  async listForOrg(orgId: string, upstreamId?: string): Promise<ConnectionHealth[]> {
    const rows = await this.prisma.userConnection.findMany({
      where: { orgId, ...(upstreamId ? { upstreamId } : {}) },
      orderBy: { createdAt: 'asc' },
    });
    return rows.map((r) => this.healthOf(r));
  }

  /** Forgets the user's tokens for the upstream; their next call answers AUTH_REQUIRED. */
  async revoke(orgId: string, userId: string, upstreamId: string, audit: AuditedBy<void>): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.userConnection.deleteMany({ where: { orgId, userId, upstreamId } });
      if (count === 0)
        throw new ConnectionsException(
          ConnectionsExceptionCode.ConnectionNotFound,
          `user ${userId} has no connection to upstream ${upstreamId}`,
        );
      await recordAudited(tx, audit, undefined);
    });
  }

  /** Offboarding: forgets every upstream token of the user; the upstreams they connected are named in the answer. */
  async disconnectAll(orgId: string, userId: string, db: Prisma.TransactionClient): Promise<string[]> {
    const rows = await db.userConnection.findMany({ where: { orgId, userId }, select: { upstreamId: true } });
    await db.userConnection.deleteMany({ where: { orgId, userId } });
    return rows.map((r) => r.upstreamId);
  }

  /** The calling user's access token for the upstream, refreshed if it is about to expire. */
  async accessTokenFor(orgId: string, userId: string, upstreamId: string): Promise<UserAccessToken> {
    let row = await this.prisma.userConnection.findFirst({ where: { orgId, userId, upstreamId } });
    if (!row) return { ok: false, reason: 'not_connected' };
    if (row.status === 'refresh_failed') return { ok: false, reason: 'refresh_failed' };
    if (row.expiresAt && row.expiresAt.getTime() - Date.now() < REFRESH_SKEW_MS) {
      row = await this.refresh(row);
      if (!row || row.status !== 'valid') return { ok: false, reason: 'refresh_failed' };
    }
    return { ok: true, accessToken: this.open(row).accessToken };
  }

  /** The upstream refused the user's token before it expired: try one refresh, else mark it failed. */
  async tokenRefused(orgId: string, userId: string, upstreamId: string): Promise<UserAccessToken> {
    const row = await this.prisma.userConnection.findFirst({ where: { orgId, userId, upstreamId } });
    if (!row) return { ok: false, reason: 'not_connected' };
    const refreshed = await this.refresh(row);
    if (!refreshed || refreshed.status !== 'valid') return { ok: false, reason: 'refresh_failed' };
    return { ok: true, accessToken: this.open(refreshed).accessToken };
  }

  /** For the catalog sync of a per-user OAuth upstream: the token of a connected user, if any. */
  async headersForSync(orgId: string, upstreamId: string): Promise<Record<string, string> | null> {
    const rows = await this.prisma.userConnection.findMany({
      where: { orgId, upstreamId, status: 'valid' },
      orderBy: { updatedAt: 'desc' },
      take: 3,
    });
    for (const r of rows) {
      const token = await this.accessTokenFor(orgId, r.userId, upstreamId);
      if (token.ok) return { Authorization: `Bearer ${token.accessToken}` };
    }
    return null;
  }

  /** Refreshes every valid connection expiring within `withinMs` (the worker's oauth-refresh job). */
  async refreshExpiring(withinMs: number): Promise<{ refreshed: number; failed: number }> {
    const rows = await this.prisma.userConnection.findMany({
      where: { status: 'valid', expiresAt: { not: null, lt: new Date(Date.now() + withinMs) } },
      orderBy: { expiresAt: 'asc' },
      take: 500,
    });
    let refreshed = 0;
    let failed = 0;
    for (const row of rows) {
      const after = await this.refresh(row);
      if (after?.status === 'valid') refreshed++;
      else failed++;
    }
    return { refreshed, failed };
  }

  /**
   * Refreshes one connection under a Redis lock (refresh tokens may rotate: two concurrent
   * refreshes would burn each other's). Whoever loses the lock waits and reads the winner's row.
   * A refusal marks the connection `refresh_failed`; its user must connect again.
   */
  private async refresh(row: UserConnection): Promise<UserConnection | null> {
    const lockKey = this.redis.orgKey(row.orgId, 'oauth-refresh', row.id);
    const lockId = randomBytes(8).toString('hex');
    const acquired = await this.redis.client.set(lockKey, lockId, 'PX', REFRESH_LOCK_MS, 'NX');
    if (!acquired) return this.awaitOtherRefresh(row);
    try {
      const current = await this.prisma.userConnection.findUnique({ where: { id: row.id } });
      if (!current) return null;
      if (current.updatedAt.getTime() !== row.updatedAt.getTime()) return current;
      const sealed = this.open(current);
      let tokens: OAuthTokens;
      try {
        if (!sealed.refreshToken) throw new Error('the authorization server issued no refresh token');
        const upstream = await this.oauth.oauthUpstream(current.orgId, current.upstreamId);
        const client = await this.oauth.clientFor(upstream, null);
        if (client.client_id !== sealed.clientId)
          throw new Error('the upstream’s OAuth client changed since the user connected');
        const server = await this.oauth.authServerFor(upstream);
        tokens = await refreshAuthorization(server.authorizationServerUrl, {
          metadata: server.metadata,
          clientInformation: client,
          refreshToken: sealed.refreshToken,
          resource: new URL(server.resource),
          fetchFn: outboundFetch(),
        });
      } catch (err) {
        const reason = refreshErrorOf(err);
        this.logger.warn(
          `refresh of connection ${current.id} (user ${current.userId}, upstream ${current.upstreamId}) failed: ${reason}`,
        );
        return this.prisma.userConnection.update({
          where: { id: current.id },
          data: { status: 'refresh_failed' satisfies ConnectionStatus, lastRefreshError: reason },
        });
      }
      this.logger.log(`refreshed connection ${current.id} (user ${current.userId}, upstream ${current.upstreamId})`);
      return this.storeTokens(
        current.orgId,
        current.userId,
        current.upstreamId,
        { ...tokens, refresh_token: tokens.refresh_token ?? sealed.refreshToken },
        sealed.clientId,
        this.prisma,
      );
    } finally {
      // Release only our own lock (it may have expired and been taken by another replica).
      await this.redis.run(RELEASE_LOCK, { lockKey, holder: lockId });
    }
  }

  private async awaitOtherRefresh(row: UserConnection): Promise<UserConnection | null> {
    for (let i = 0; i < 50; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const current = await this.prisma.userConnection.findUnique({ where: { id: row.id } });
      if (!current || current.updatedAt.getTime() !== row.updatedAt.getTime()) return current;
    }
    return null;
  }

  private open(row: UserConnection): SealedTokens {
    return this.box.openJson<SealedTokens>(row.tokensEnc, context(row.orgId, row.userId, row.upstreamId));
  }

  private healthOf(row: UserConnection): ConnectionHealth {
    const now = Date.now();
    const expiresAt = row.expiresAt?.getTime() ?? null;
    const canRefresh = row.status === 'valid' && !!this.safeOpen(row)?.refreshToken;
    const health: ConnectionHealth['health'] =
      row.status === 'refresh_failed'
        ? 'refresh_failed'
        : expiresAt !== null && expiresAt <= now
          ? 'expired'
          : expiresAt !== null && expiresAt - now < EXPIRING_WITHIN_MS
            ? 'expiring'
            : 'valid';
    return {
      id: row.id,
      orgId: row.orgId,
      userId: row.userId,
      upstreamId: row.upstreamId,
      health,
      scope: row.scope,
      expiresAt: row.expiresAt,
      canRefresh,
      lastRefreshError: row.lastRefreshError,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
    };
  }

  private safeOpen(row: UserConnection): SealedTokens | null {
    try {
      return this.open(row);
    } catch {
      return null;
    }
  }
}

/** Tokens are bound to their org, user and upstream. */
function context(orgId: string, userId: string, upstreamId: string): string {
  return `user-connection:${orgId}:${userId}:${upstreamId}`;
}

function expiryOf(tokens: OAuthTokens): Date | null {
  return typeof tokens.expires_in === 'number' ? new Date(Date.now() + tokens.expires_in * 1000) : null;
}

/** The error's message, cut short: an authorization server's error text, never a token. */
function refreshErrorOf(err: unknown): string {
  const refused = outboundExceptionIn(err);
  if (refused) return refused.message;
  const message = err instanceof Error ? `${err.name === 'Error' ? '' : `${err.name}: `}${err.message}` : String(err);
  return message.slice(0, 500);
}
