import { Inject, Injectable, Logger } from '@nestjs/common';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { EdgeConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { ConnectFlowService, UserConnectionService, oauthCallbackUrl } from '@tollgate/connections';
import { Principal } from '@tollgate/identity';
import type { AnySchema, SchemaOutput } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import {
  UpstreamClientPool,
  UpstreamException,
  UpstreamExceptionCode,
  UpstreamPropagation,
  UpstreamSession,
  UpstreamSpec,
} from '@tollgate/mcp-client';

/** Why a per-user OAuth upstream cannot be called as this user, and where they can fix it. */
export interface AuthRequired {
  upstreamId: string;
  namespace: string;
  reason: 'not_connected' | 'refresh_failed';
  /** The upstream's authorization URL for this user (state bound to them), or null if none could be made. */
  connectUrl: string | null;
  connectUrlExpiresAt: string | null;
  /** Why no connect URL could be made (no ADMIN_PUBLIC_URL, discovery failed...). */
  connectError?: string;
}

export type UpstreamOutcome<T> = { ok: true; result: T } | { ok: false; authRequired: AuthRequired };
export type UpstreamCallOutcome = UpstreamOutcome<CallToolResult>;

/**
 * Calls an upstream with the right credential: the upstream's own (none or a static secret), or,
 * for per-user OAuth, the calling user's access token through a client pooled for that user
 * alone. A user without a usable token gets `AuthRequired` with a fresh connect URL; a token the
 * upstream refuses is refreshed once and the call retried.
 */
@Injectable()
export class UpstreamCaller {
  private readonly logger = new Logger(UpstreamCaller.name);

  constructor(
    private readonly pool: UpstreamClientPool,
    private readonly connections: UserConnectionService,
    private readonly connectFlow: ConnectFlowService,
    @Inject(TOLLGATE_CONFIG) private readonly config: EdgeConfig,
  ) {}

  /** `propagation`: the call's trace context and request id, sent with it. Hands on asCaller's promise. */
  callTool(
    principal: Principal,
    spec: UpstreamSpec,
    name: string,
    args: Record<string, unknown> | undefined,
    signal?: AbortSignal,
    propagation?: UpstreamPropagation,
  ): Promise<UpstreamCallOutcome> {
    return this.asCaller(principal, spec, (session) =>
      this.pool.callTool(spec, name, args, signal, session, propagation),
    );
  }

  /** Any other request (`resources/read`, `prompts/get`, `completion/complete`...) with the same credential rules. */
  request<S extends AnySchema>(
    principal: Principal,
    spec: UpstreamSpec,
    request: { method: string; params?: Record<string, unknown> },
    schema: S,
    signal?: AbortSignal,
  ): Promise<UpstreamOutcome<SchemaOutput<S>>> {
    return this.asCaller(principal, spec, (session) => this.pool.request(spec, request, schema, signal, session));
  }

  private async asCaller<T>(
    principal: Principal,
    spec: UpstreamSpec,
    send: (session?: UpstreamSession) => Promise<T>,
  ): Promise<UpstreamOutcome<T>> {
    if (spec.authMode !== 'PER_USER_OAUTH') return { ok: true, result: await send() };

    const token = await this.connections.accessTokenFor(principal.orgId, principal.userId, spec.id);
    if (!token.ok) return { ok: false, authRequired: await this.authRequired(principal, spec, token.reason) };
    try {
      return { ok: true, result: await send(sessionOf(principal, token.accessToken)) };
    } catch (err) {
      if (!(err instanceof UpstreamException) || err.code !== UpstreamExceptionCode.Unauthorized) throw err;
    }
    // The upstream refused a token we thought valid (revoked or rotated at the authorization server).
    const renewed = await this.connections.tokenRefused(principal.orgId, principal.userId, spec.id);
    if (!renewed.ok) return { ok: false, authRequired: await this.authRequired(principal, spec, renewed.reason) };
    try {
      return { ok: true, result: await send(sessionOf(principal, renewed.accessToken)) };
    } catch (err) {
      if (!(err instanceof UpstreamException) || err.code !== UpstreamExceptionCode.Unauthorized) throw err;
      return { ok: false, authRequired: await this.authRequired(principal, spec, 'refresh_failed') };
    }
  }

  private async authRequired(
    principal: Principal,
    spec: UpstreamSpec,
    reason: AuthRequired['reason'],
  ): Promise<AuthRequired> {
    await this.pool.evictSession(spec.id, principal.userId);
    const base = { upstreamId: spec.id, namespace: spec.namespace, reason };
    try {
      const started = await this.connectFlow.startConnection(
        principal.orgId,
        principal.userId,
        spec.id,
        oauthCallbackUrl(this.config.edge.adminPublicUrl),
      );
      return { ...base, connectUrl: started.authorizationUrl, connectUrlExpiresAt: started.expiresAt.toISOString() };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.logger.warn(`no connect URL for upstream ${spec.namespace} (${spec.id}): ${message}`);
      return { ...base, connectUrl: null, connectUrlExpiresAt: null, connectError: message };
    }
  }
}

/** The user's own pooled client: keyed by user id, carrying only their token. */
function sessionOf(principal: Principal, accessToken: string): UpstreamSession {
  return { key: principal.userId, headers: { Authorization: `Bearer ${accessToken}` } };
}
