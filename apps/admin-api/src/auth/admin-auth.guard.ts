import { ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request } from 'express';
import { ADMIN_BEARER_STRATEGY } from './admin-bearer.strategy';
import { IS_PUBLIC } from './public.decorator';

/**
 * Global guard: every route needs an admin bearer token unless marked @Public(). Only the
 * Authorization header is accepted: tokens in query strings end up in proxy and access logs.
 */
@Injectable()
export class AdminAuthGuard extends AuthGuard(ADMIN_BEARER_STRATEGY) {
  constructor(private readonly reflector: Reflector) {
    super();
  }

  override canActivate(context: ExecutionContext) {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()]);
    if (isPublic) return true;
    const req = context.switchToHttp().getRequest<Request>();
    const header = req.headers.authorization;
    if (typeof header !== 'string' || !/^Bearer\s+\S+/i.test(header)) {
      throw new UnauthorizedException('an admin bearer token is required (Authorization: Bearer <token>)');
    }
    return super.canActivate(context);
  }

  override handleRequest<TUser>(err: unknown, user: TUser | false): TUser {
    // A database or Redis failure while resolving the token is a 500, not a 401.
    if (err) throw err;
    if (!user) throw new UnauthorizedException('the admin token is invalid or revoked');
    return user;
  }
}
