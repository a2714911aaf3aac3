import { Inject, Injectable, Logger } from '@nestjs/common';
import { discoverOAuthServerInfo, registerClient } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  AuthorizationServerMetadata,
  OAuthClientInformationMixed,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { Prisma, PrismaService, UpstreamServer } from '@tollgate/db';
import { SecretBox } from '@tollgate/secret-box';
import { outboundExceptionIn, outboundFetch } from '@tollgate/outbound';
import { openUpstreamSecrets, sealUpstreamSecrets } from '@tollgate/mcp-client';
import { ConnectionsException, ConnectionsExceptionCode } from './connections.exception';

/** Where an upstream's tokens come from, and for which resource they are asked. */
export interface UpstreamAuthServer {
  authorizationServerUrl: string;
  metadata: AuthorizationServerMetadata | undefined;
  /** RFC 8707 resource indicator: the upstream's own identifier (from its RFC 9728 metadata). */
  resource: string;
}

interface OAuthSettings {
  clientId?: string;
  scope?: string;
  /** true when Tollgate registered the client dynamically (RFC 7591). */
  registered?: boolean;
}

// Metadata rarely changes; re-discovering on every connect or refresh would double the round trips.
const DISCOVERY_TTL_MS = 10 * 60_000;

/**
 * The OAuth side of a per-user OAuth upstream: discovery (RFC 9728 protected resource metadata,
 * then RFC 8414 authorization server metadata) and the client Tollgate uses there, configured by
 * an admin or registered dynamically once per upstream (RFC 7591, under an advisory lock so two
 * replicas never register twice).
 */
@Injectable()
export class UpstreamOAuthService {
  private readonly logger = new Logger(UpstreamOAuthService.name);
  private readonly secrets: SecretBox;
  private readonly discovered = new Map<string, { at: number; server: UpstreamAuthServer }>();

  constructor(
    private readonly prisma: PrismaService,
    @Inject(TOLLGATE_CONFIG) config: BaseConfig,
  ) {
    this.secrets = new SecretBox(config.security.encryptionKeys);
  }

  /** The upstream of an org, which must use per-user OAuth. */
  async oauthUpstream(orgId: string, upstreamId: string): Promise<UpstreamServer> {
    const upstream = await this.prisma.upstreamServer.findFirst({ where: { orgId, id: upstreamId } });
    if (!upstream)
      throw new ConnectionsException(
        ConnectionsExceptionCode.UpstreamNotFound,
        `upstream ${upstreamId} not found`,
        'upstreamId',
      );
    if (upstream.authMode !== 'PER_USER_OAUTH' || !upstream.url) {
      throw new ConnectionsException(
        ConnectionsExceptionCode.NotPerUserOAuth,
        `upstream ${upstream.namespace} does not use per-user OAuth`,
        'upstreamId',
      );
    }
    return upstream;
  }

  scopeOf(upstream: UpstreamServer): string | undefined {
    return this.settingsOf(upstream).scope;
  }

  async authServerFor(upstream: UpstreamServer): Promise<UpstreamAuthServer> {
    const cached = this.discovered.get(upstream.id);
    if (cached && Date.now() - cached.at < DISCOVERY_TTL_MS) return cached.server;
    let server: UpstreamAuthServer;
    try {
      // Discovery follows URLs the upstream names (metadata, authorization server): each is checked when connected.
      const info = await discoverOAuthServerInfo(upstream.url!, { fetchFn: outboundFetch() });
      server = {
        authorizationServerUrl: info.authorizationServerUrl,
        metadata: info.authorizationServerMetadata,
        resource: info.resourceMetadata?.resource ?? resourceOf(upstream.url!),
      };
    } catch (err) {
      throw new ConnectionsException(
        ConnectionsExceptionCode.DiscoveryFailed,
        `could not discover the authorization server of ${upstream.namespace}: ${oauthFailureReason(err)}`,
      );
    }
    this.discovered.set(upstream.id, { at: Date.now(), server });
    return server;
  }

  /** The client to use at the upstream's authorization server; registers one if none is configured. */
  async clientFor(upstream: UpstreamServer, redirectUri: string | null): Promise<OAuthClientInformationMixed> {
    const known = this.knownClient(upstream);
    if (known) return known;
    if (!redirectUri)
      throw new ConnectionsException(
        ConnectionsExceptionCode.NotConfigured,
        `upstream ${upstream.namespace} has no OAuth client yet`,
      );
    const server = await this.authServerFor(upstream);
    return this.prisma.$transaction(
      async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`oauth-client:${upstream.id}`}))`;
        const fresh = await tx.upstreamServer.findUniqueOrThrow({ where: { id: upstream.id } });
        const again = this.knownClient(fresh);
        if (again) return again;
        if (server.metadata && !server.metadata.registration_endpoint) {
          throw new ConnectionsException(
            ConnectionsExceptionCode.DiscoveryFailed,
            `the authorization server of ${upstream.namespace} does not allow dynamic client registration; configure oauth.clientId on the upstream`,
          );
        }
        let client;
        try {
          client = await registerClient(server.authorizationServerUrl, {
            metadata: server.metadata,
            fetchFn: outboundFetch(),
            scope: this.scopeOf(fresh),
            clientMetadata: {
              client_name: 'Tollgate',
              redirect_uris: [redirectUri],
              grant_types: ['authorization_code', 'refresh_token'],
              response_types: ['code'],
              token_endpoint_auth_method: 'client_secret_basic',
            },
          });
        } catch (err) {
          throw new ConnectionsException(
            ConnectionsExceptionCode.DiscoveryFailed,
            `client registration at ${upstream.namespace}'s authorization server failed: ${oauthFailureReason(err)}`,
          );
        }
        const settings = { ...((fresh.settings ?? {}) as Prisma.JsonObject) };
        const oauth: OAuthSettings = { ...this.settingsOf(fresh), clientId: client.client_id, registered: true };
        const secrets = {
          ...openUpstreamSecrets(this.secrets, fresh),
          ...(client.client_secret ? { oauthClientSecret: client.client_secret } : {}),
        };
        await tx.upstreamServer.update({
          where: { id: fresh.id },
          data: {
            settings: { ...settings, oauth: oauth as Prisma.JsonObject },
            secretsEnc: sealUpstreamSecrets(this.secrets, fresh.id, secrets),
          },
        });
        this.logger.log(`registered an OAuth client for upstream ${upstream.namespace} (${upstream.id})`);
        return {
          client_id: client.client_id,
          ...(client.client_secret ? { client_secret: client.client_secret } : {}),
        };
      },
      { timeout: 30_000 },
    );
  }

  private knownClient(upstream: UpstreamServer): OAuthClientInformationMixed | null {
    const clientId = this.settingsOf(upstream).clientId;
    if (!clientId) return null;
    const secret = openUpstreamSecrets(this.secrets, upstream).oauthClientSecret;
    return { client_id: clientId, ...(secret ? { client_secret: secret } : {}) };
  }

  private settingsOf(upstream: UpstreamServer): OAuthSettings {
    return (((upstream.settings ?? {}) as { oauth?: OAuthSettings }).oauth ?? {}) as OAuthSettings;
  }
}

/** RFC 8707: the resource is the server's URL without its fragment. */
function resourceOf(url: string): string {
  const u = new URL(url);
  u.hash = '';
  return u.href;
}

/** An outbound refusal names its rule; undici's fetch hides it behind "fetch failed". */
export function oauthFailureReason(err: unknown): string {
  return outboundExceptionIn(err)?.message ?? (err instanceof Error ? err.message : String(err));
}
