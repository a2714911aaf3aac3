import { Injectable, Logger } from '@nestjs/common';
import { exchangeAuthorization, startAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import { AuditedBy, recordAudited } from '@tollgate/audit';
import { PrismaService } from '@tollgate/db';
import { RedisService } from '@tollgate/redis';
import { outboundFetch } from '@tollgate/outbound';
import { randomBytes } from 'node:crypto';
import { ConnectionsException, ConnectionsExceptionCode } from './connections.exception';
import { UpstreamOAuthService, oauthFailureReason } from './upstream-oauth.service';
import { UserConnectionService } from './user-connection.service';

/** How long a user has to finish the authorization in their browser. */
export const CONNECT_STATE_TTL_SECONDS = 600;

/** What the state stands for, kept in Redis until the callback (the verifier never leaves the server). */
interface PendingConnection {
  orgId: string;
  userId: string;
  upstreamId: string;
  codeVerifier: string;
  redirectUri: string;
  clientId: string;
}

export interface StartedConnection {
  authorizationUrl: string;
  state: string;
  expiresAt: Date;
}

export interface CompletedConnection {
  orgId: string;
  userId: string;
  upstreamId: string;
  connectionId: string;
}

/**
 * The connect flow of per-user OAuth: an authorization URL (code flow, PKCE S256, the upstream
 * as `resource`) whose random state stands for one user and upstream, then the callback that
 * trades the code for that user's tokens. A state works once and for ten minutes.
 */
@Injectable()
export class ConnectFlowService {
  private readonly logger = new Logger(ConnectFlowService.name);

  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
    private readonly oauth: UpstreamOAuthService,
    private readonly connections: UserConnectionService,
  ) {}

  async startConnection(
    orgId: string,
    userId: string,
    upstreamId: string,
    redirectUri: string,
  ): Promise<StartedConnection> {
    const user = await this.prisma.user.findFirst({ where: { orgId, id: userId }, select: { id: true } });
    if (!user)
      throw new ConnectionsException(ConnectionsExceptionCode.UserNotFound, `user ${userId} not found`, 'userId');
    const upstream = await this.oauth.oauthUpstream(orgId, upstreamId);
    const server = await this.oauth.authServerFor(upstream);
    const client = await this.oauth.clientFor(upstream, redirectUri);
    const state = randomBytes(32).toString('base64url');
    const { authorizationUrl, codeVerifier } = await startAuthorization(server.authorizationServerUrl, {
      metadata: server.metadata,
      clientInformation: client,
      redirectUrl: redirectUri,
      scope: this.oauth.scopeOf(upstream),
      state,
      resource: new URL(server.resource),
    });
    const pending: PendingConnection = {
      orgId,
      userId,
      upstreamId,
      codeVerifier,
      redirectUri,
      clientId: client.client_id,
    };
    await this.redis.client.set(this.stateKey(state), JSON.stringify(pending), 'EX', CONNECT_STATE_TTL_SECONDS);
    return {
      authorizationUrl: authorizationUrl.href,
      state,
      expiresAt: new Date(Date.now() + CONNECT_STATE_TTL_SECONDS * 1000),
    };
  }

  /** The callback: the state must be one we issued and not used yet; the code is traded for tokens. */
  async completeConnection(
    state: string,
    code: string | undefined,
    error: string | undefined,
    audit: (who: { orgId: string; userId: string }) => AuditedBy<CompletedConnection>,
  ): Promise<CompletedConnection> {
    const raw = await this.redis.client.getdel(this.stateKey(state));
    if (!raw)
      throw new ConnectionsException(
        ConnectionsExceptionCode.InvalidState,
        'unknown or expired state: start the connection again',
        'state',
      );
    const pending = JSON.parse(raw) as PendingConnection;
    if (error || !code) {
      throw new ConnectionsException(
        ConnectionsExceptionCode.AuthorizationFailed,
        `the authorization server did not grant access (${(error ?? 'no code').slice(0, 100)})`,
        'code',
      );
    }
    const upstream = await this.oauth.oauthUpstream(pending.orgId, pending.upstreamId);
    const client = await this.oauth.clientFor(upstream, pending.redirectUri);
    if (client.client_id !== pending.clientId)
      throw new ConnectionsException(
        ConnectionsExceptionCode.InvalidState,
        'the upstream’s OAuth client changed: start the connection again',
        'state',
      );
    const server = await this.oauth.authServerFor(upstream);
    let tokens;
    try {
      tokens = await exchangeAuthorization(server.authorizationServerUrl, {
        metadata: server.metadata,
        clientInformation: client,
        authorizationCode: code,
        codeVerifier: pending.codeVerifier,
        redirectUri: pending.redirectUri,
        resource: new URL(server.resource),
        fetchFn: outboundFetch(),
      });
    } catch (err) {
      throw new ConnectionsException(
        ConnectionsExceptionCode.AuthorizationFailed,
        `the authorization server refused the code: ${oauthFailureReason(err).slice(0, 300)}`,
        'code',
      );
    }
    // The tokens and the audit row naming the connecting user commit together.
    const done = await this.prisma.$transaction(async (tx) => {
      const row = await this.connections.storeTokens(
        pending.orgId,
        pending.userId,
        pending.upstreamId,
        tokens,
        client.client_id,
        tx,
      );
      const done = {
        orgId: pending.orgId,
        userId: pending.userId,
        upstreamId: pending.upstreamId,
        connectionId: row.id,
      };
      await recordAudited(tx, audit(pending), done);
      return done;
    });
    this.logger.log(`user ${pending.userId} connected upstream ${upstream.namespace} (${upstream.id})`);
    return done;
  }

  private stateKey(state: string): string {
    return this.redis.key('oauth-state', state);
  }
}
