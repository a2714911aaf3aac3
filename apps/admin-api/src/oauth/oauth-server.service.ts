import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { NextFunction, Request, Response } from 'express';
import { AdminConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { PrismaService } from '@tollgate/db';
import { selfActor, IdentityException } from '@tollgate/identity';
import {
  clientMetadataDocumentProblem,
  createOAuthProvider,
  deriveOAuthKeys,
  OAUTH_INTERACTION_PATH,
  OAUTH_REGISTRATION_SOURCE,
  OAUTH_ROUTES,
  OAuthGrantKeys,
  OAuthProvider,
  OAuthRegistrationLimiter,
  oauthStoreAdapter,
  registrationProblem,
  sweepExpiredOAuthState,
} from '@tollgate/oauth-server';
import { outboundFetch } from '@tollgate/outbound';
import { RedisService } from '@tollgate/redis';
import { AuditService } from '../audit/audit.service';
import { OAuthInteractionHandler, SSO_CALLBACK_PATH } from './oauth-interaction.handler';

/** How often expired OAuth rows (unused clients, grants, codes, sessions) are deleted. */
const SWEEP_EVERY_MS = 10 * 60_000;
/** How many refused sources this replica remembers (beyond that it asks Postgres again). */
const REFUSED_SOURCES_KEPT = 10_000;

// A refused client metadata document in the trail of the orgs that authorised the client: at most
// once an hour per org, client and kind of reason, for at most this many orgs.
const METADATA_REFUSAL_AUDIT_EVERY_MS = 60 * 60_000;
const METADATA_REFUSAL_AUDIT_MAX_ORGS = 100;
const METADATA_REFUSAL_AUDIT_MAX_TRACKED = 10_000;
const METADATA_PATHS = new Set(['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']);

/**
 * Mounts the OAuth authorization server on the admin API's origin when the deployment names its
 * public URLs (ADMIN_PUBLIC_URL is the issuer, EDGE_PUBLIC_URL the resource): the endpoints under
 * /oauth, RFC 8414 metadata at /.well-known/oauth-authorization-server, and the sign-in and
 * consent pages. Mounted after Nest's routes, before its not-found handler.
 */
@Injectable()
export class OAuthServerService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(OAuthServerService.name);
  provider: OAuthProvider | null = null;
  private sweeper: NodeJS.Timeout | undefined;
  private readonly auditedMetadataRefusals = new Map<string, number>();
  /** Registrations from one source, one at a time on this replica (the limit counts stored rows). */
  private readonly registering = new Map<string, Promise<void>>();
  /** Sources refused lately, until when (a cache of the stored verdict, bounded). */
  private readonly refusedUntil = new Map<string, number>();

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
    private readonly grantKeys: OAuthGrantKeys,
    private readonly interactions: OAuthInteractionHandler,
    private readonly registrationLimiter: OAuthRegistrationLimiter,
    private readonly audit: AuditService,
    @Inject(TOLLGATE_CONFIG) private readonly config: AdminConfig,
  ) {}

  onModuleInit(): void {
    const { issuer, resource } = this.config.oauth;
    if (!issuer || !resource) {
      this.logger.log('OAuth authorization server off: set ADMIN_PUBLIC_URL and EDGE_PUBLIC_URL to turn it on');
      return;
    }
    const provider = createOAuthProvider({
      issuer,
      resource,
      adapter: oauthStoreAdapter({
        prisma: this.prisma,
        redis: this.redis.client,
        redisPrefix: this.config.redis.prefix,
        unusedClientTtlSeconds: this.config.admin.oauthRegistration.unusedClientTtlSeconds,
      }),
      // Derived from the first encryption key: the same on every replica, stored nowhere.
      keys: deriveOAuthKeys(this.config.security.encryptionKeys[0].key),
      accessTokenTtlSeconds: this.config.admin.oauthAccessTokenTtlSeconds,
      refreshTokenTtlSeconds: this.config.admin.oauthRefreshTokenTtlSeconds,
      findUser: async (sub) => {
        const user = await this.prisma.user
          .findFirst({ where: { id: sub }, select: { email: true } })
          .catch(() => null);
        return user;
      },
      keyIdOfGrant: (grantId) => this.keyOfGrant(grantId),
      fetch: outboundFetch(),
    });
    provider.on('server_error', (_ctx: unknown, err: Error) => this.logger.error(`oauth server error: ${err.message}`));
    provider.on('authorization.error', (ctx: { oidc?: { params?: { client_id?: unknown } } }, err: unknown) => {
      const problem = clientMetadataDocumentProblem(err);
      if (!problem) return;
      const clientId = String(ctx.oidc?.params?.client_id ?? '').slice(0, 300);
      this.logger.warn(`client id metadata document refused: client_id=${clientId} reason=${problem}`);
      void this.auditMetadataDocumentRefusal(clientId, problem);
    });
    this.provider = provider;
    this.interactions.attach(provider, this.config);
    const callback = provider.callback();
    const app = this.adapterHost.httpAdapter.getInstance<{
      use(fn: (req: Request, res: Response, next: NextFunction) => void): void;
    }>();
    app.use((req: Request, res: Response, next: NextFunction) => {
      const path = req.path;
      if (path.startsWith(`${OAUTH_INTERACTION_PATH}/`) || path === SSO_CALLBACK_PATH) {
        void this.interactions.handle(req, res);
        return;
      }
      if (METADATA_PATHS.has(path)) {
        // RFC 8414 and OpenID discovery serve the same document.
        req.url = '/.well-known/openid-configuration';
        callback(req, res);
        return;
      }
      if (path === OAUTH_ROUTES.registration && req.method === 'POST') {
        void this.register(req, res, callback);
        return;
      }
      if (path.startsWith('/oauth/')) {
        callback(req, res);
        return;
      }
      next();
    });
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_EVERY_MS).unref();
    this.logger.log(`OAuth authorization server at ${issuer} (tokens for ${resource})`);
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }

  /** Deletes expired OAuth state; a failure waits for the next round. */
  async sweep(): Promise<number> {
    try {
      return await sweepExpiredOAuthState(this.prisma);
    } catch (err) {
      this.logger.warn(`oauth sweep failed: ${(err as Error).message}`);
      return 0;
    }
  }

  /**
   * Dynamic client registration, bounded before oidc-provider stores anything: the metadata's
   * size and values (RFC 7591 errors), then the per-source and unused-client limits (429).
   */
  private async register(req: Request, res: Response, callback: (req: Request, res: Response) => void): Promise<void> {
    const problem = registrationProblem(req.body);
    if (problem) {
      res.status(400).json(problem);
      return;
    }
    const source = this.registrationLimiter.sourceHash(
      req.ip ?? req.socket.remoteAddress ?? '',
      this.config.security.keyHashSecret,
    );
    // Known to be over its limit: answered from memory, no query (a flood costs next to nothing).
    const until = this.refusedUntil.get(source) ?? 0;
    if (until > Date.now())
      return this.tooMany(res, source, {
        reason: `at most ${this.config.admin.oauthRegistration.perSourcePerHour} client registrations per hour from one address`,
        retryAfterSeconds: Math.ceil((until - Date.now()) / 1000),
      });
    // In line behind this source's registrations in flight, if any (set before any await, so a
    // registration that finds none also finds every earlier one of its source stored).
    const previous = this.registering.get(source);
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const turn = (previous ?? Promise.resolve()).then(() => mine);
    this.registering.set(source, turn);
    try {
      if (previous) {
        // Over the limit already: answered at once, without waiting for the ones ahead.
        const early = await this.registrationLimiter
          .check(source, this.config.admin.oauthRegistration)
          .catch(() => null);
        if (early && !early.allowed) return this.tooMany(res, source, early);
        await previous;
      }
      const verdict = await this.registrationLimiter.check(source, this.config.admin.oauthRegistration);
      if (!verdict.allowed) return this.tooMany(res, source, verdict);
      const done = new Promise<void>((resolve) => res.once('close', resolve).once('finish', resolve));
      OAUTH_REGISTRATION_SOURCE.run(source, () => callback(req, res));
      await done;
    } catch (err) {
      this.logger.error(`oauth registration failed: ${(err as Error).message}`);
      if (!res.headersSent)
        res
          .status(503)
          .setHeader('Retry-After', '5')
          .json({ error: 'temporarily_unavailable', error_description: 'registration is unavailable; try again' });
    } finally {
      release();
      if (this.registering.get(source) === turn) this.registering.delete(source);
    }
  }

  private tooMany(res: Response, source: string, verdict: { reason: string; retryAfterSeconds: number }): void {
    if (this.refusedUntil.size >= REFUSED_SOURCES_KEPT) this.refusedUntil.clear();
    this.refusedUntil.set(source, Date.now() + verdict.retryAfterSeconds * 1000);
    res.setHeader('Retry-After', String(verdict.retryAfterSeconds));
    res.status(429).json({ error: 'too_many_requests', error_description: verdict.reason });
  }

  /**
   * A refused client id metadata document ends the flow before anyone signs in, so the request
   * names no organisation. The orgs that know the client are those where someone authorised it
   * (a live OAuth key of that client id): each gets the refusal in its audit trail, since its
   * people's client stopped working. At most once per org, client and kind of reason per hour (in
   * this replica's memory): the authorize endpoint needs no credential, and a refusal anyone can
   * repeat must not grow the trail. A client no org has authorised is in the deployment's log only.
   */
  private async auditMetadataDocumentRefusal(clientId: string, problem: string): Promise<void> {
    try {
      const keys = await this.prisma.virtualKey.findMany({
        where: { kind: 'OAUTH', oauthClientId: clientId, revokedAt: null },
        select: { orgId: true },
        distinct: ['orgId'],
        take: METADATA_REFUSAL_AUDIT_MAX_ORGS,
      });
      const now = Date.now();
      for (const { orgId } of keys) {
        const dedupKey = `${orgId} ${clientId} ${problem.split(':')[0]}`;
        if ((this.auditedMetadataRefusals.get(dedupKey) ?? 0) > now) continue;
        if (this.auditedMetadataRefusals.size >= METADATA_REFUSAL_AUDIT_MAX_TRACKED)
          for (const [k, until] of this.auditedMetadataRefusals)
            if (until <= now) this.auditedMetadataRefusals.delete(k);
        this.auditedMetadataRefusals.set(dedupKey, now + METADATA_REFUSAL_AUDIT_EVERY_MS);
        await this.audit.record(
          { tokenId: 'oauth-server', role: 'MEMBER', orgId, teamId: null, userId: null },
          {
            orgId,
            action: 'oauth.client-metadata-refused',
            targetType: 'oauth-client',
            targetId: clientId,
            details: { clientId, reason: problem },
          },
        );
      }
    } catch (err) {
      this.logger.warn(`could not audit a refused client metadata document: ${(err as Error).message}`);
    }
  }

  /** The key a token stands for; made (and audited) when the authorization code is redeemed. */
  private async keyOfGrant(grantId: string): Promise<string | null> {
    let bound;
    try {
      bound = await this.grantKeys.keyForToken(grantId, (choice) => ({
        by: selfActor('oauth-consent', { orgId: choice.orgId, teamId: choice.teamId, userId: choice.userId }),
        entry: ({ keyId, created }) => ({
          orgId: choice.orgId,
          action: 'key.oauth-authorized',
          targetType: 'virtual-key',
          targetId: keyId,
          details: {
            clientId: choice.clientId,
            clientName: created?.key.oauthClientName,
            redirectHost: choice.redirectHost,
          },
        }),
      }));
    } catch (err) {
      // The person was offboarded or left the team between consent and redemption.
      if (err instanceof IdentityException) return null;
      throw err;
    }
    if (!bound) return null;
    const made = bound.created;
    if (made)
      this.logger.log(
        `user ${made.userId} authorised client ${made.clientId} for team ${made.teamId} (key ${bound.keyId})`,
      );
    return bound.keyId;
  }
}
