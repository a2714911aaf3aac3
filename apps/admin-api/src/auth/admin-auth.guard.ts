import { ExecutionContext, ForbiddenException, Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { AdminConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import type { AdminPrincipal } from '@tollgate/identity';
import type { Request } from 'express';
import { ADMIN_BEARER_STRATEGY } from './admin-bearer.strategy';
import { AdminSession, AdminSessionService } from './admin-session.service';
import { IS_PUBLIC } from './public.decorator';
import { CSRF_HEADER, readCookie, secureCookies, sessionCookieName } from './session-cookie';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A request authenticated by its session cookie carries the session beside the principal. */
export type SessionRequest = Request & { user?: AdminPrincipal; adminSession?: AdminSession };

/**
 * Global guard: every route needs an admin bearer token or a session cookie unless marked
 * @Public(). Tokens come only in the Authorization header (query strings end up in logs); when
 * the header is present the cookie is ignored. A cookie-authenticated change (any method but
 * GET, HEAD, OPTIONS) must carry the session's CSRF token in X-CSRF-Token.
 */
@Injectable()
export class AdminAuthGuard extends AuthGuard(ADMIN_BEARER_STRATEGY) {
  private readonly cookieName: string;

  constructor(
    private readonly reflector: Reflector,
    private readonly sessions: AdminSessionService,
    @Inject(TOLLGATE_CONFIG) config: AdminConfig,
  ) {
    super();
    this.cookieName = sessionCookieName(secureCookies(config.admin.publicUrl));
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()]);
    if (isPublic) return true;
    const req = context.switchToHttp().getRequest<SessionRequest>();
    const header = req.headers.authorization;
    const cookie = header === undefined ? readCookie(req, this.cookieName) : undefined;
    if (cookie !== undefined) return this.authenticateSession(req, cookie);
    if (typeof header !== 'string' || !/^Bearer\s+\S+/i.test(header)) {
      throw new UnauthorizedException(
        'an admin bearer token (Authorization: Bearer <token>) or a session cookie is required',
      );
    }
    return (await super.canActivate(context)) as boolean;
  }

  override handleRequest<TUser>(err: unknown, user: TUser | false): TUser {
    // A database or Redis failure while resolving the token is a 500, not a 401.
    if (err) throw err;
    if (!user) throw new UnauthorizedException('the admin token is invalid or revoked');
    return user;
  }

  private async authenticateSession(req: SessionRequest, cookie: string): Promise<boolean> {
    const session = await this.sessions.resolve(cookie);
    if (!session)
      throw new UnauthorizedException(
        'the session has ended (expired, signed out or no longer entitled); sign in again',
      );
    const csrf = req.headers[CSRF_HEADER];
    if (
      !SAFE_METHODS.has(req.method) &&
      !this.sessions.csrfMatches(session, typeof csrf === 'string' ? csrf : undefined)
    ) {
      throw new ForbiddenException(
        `a change made with a session cookie needs the ${CSRF_HEADER} header with the csrfToken of GET /v1/auth/session`,
      );
    }
    req.user = session.principal;
    req.adminSession = session;
    return true;
  }
}
