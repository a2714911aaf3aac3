import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { NextFunction, Request, Response } from 'express';
import { AdminConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { PrismaService } from '@tollgate/db';
import {
  createOAuthProvider,
  deriveOAuthKeys,
  OAUTH_INTERACTION_PATH,
  OAuthGrantKeys,
  OAuthProvider,
} from '@tollgate/oauth-server';
import { outboundFetch } from '@tollgate/outbound';
import { RedisService } from '@tollgate/redis';
import { OAuthInteractionHandler, SSO_CALLBACK_PATH } from './oauth-interaction.handler';

const METADATA_PATHS = new Set(['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']);

/**
 * Mounts the OAuth authorization server on the admin API's origin when the deployment names its
 * public URLs (ADMIN_PUBLIC_URL is the issuer, EDGE_PUBLIC_URL the resource): the endpoints under
 * /oauth, RFC 8414 metadata at /.well-known/oauth-authorization-server, and the sign-in and
 * consent pages. Mounted after Nest's routes, before its not-found handler.
 */
@Injectable()
export class OAuthServerService implements OnModuleInit {
  private readonly logger = new Logger(OAuthServerService.name);
  provider: OAuthProvider | null = null;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
    private readonly grantKeys: OAuthGrantKeys,
    private readonly interactions: OAuthInteractionHandler,
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
      redis: this.redis.client,
      redisPrefix: this.config.redis.prefix,
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
      keyIdOfGrant: (grantId) => this.grantKeys.liveKeyOf(grantId),
      fetch: outboundFetch(),
    });
    provider.on('server_error', (_ctx: unknown, err: Error) => this.logger.error(`oauth server error: ${err.message}`));
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
      if (path.startsWith('/oauth/')) {
        callback(req, res);
        return;
      }
      next();
    });
    this.logger.log(`OAuth authorization server at ${issuer} (tokens for ${resource})`);
  }
}
