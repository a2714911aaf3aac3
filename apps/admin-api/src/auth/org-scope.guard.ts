import { CanActivate, ExecutionContext, ForbiddenException, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AdminPrincipal, IdentityException, IdentityExceptionCode, IdentityService } from '@tollgate/identity';
import type { Request } from 'express';
import { ORG_ACCESS, OrgAccessLevel, decideOrgAccess, defaultOrgAccessLevel, orgAccessAskOf } from './org-access';
import { isUuid } from '@tollgate/kernel';

/**
 * Global guard for every route with an `:orgId`: the principal must belong to the org (or be a
 * platform admin) and hold the role the route needs, and the org must exist. Runs after
 * AdminAuthGuard. A malformed id is left to the route's UUID pipe, which names it in a 400.
 */
@Injectable()
export class OrgScopeGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly identity: IdentityService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request & { user?: AdminPrincipal }>();
    const orgId: unknown = req.params?.orgId;
    if (typeof orgId !== 'string' || !req.user) return true;
    if (!isUuid(orgId)) return true;

    const level =
      this.reflector.get<OrgAccessLevel | undefined>(ORG_ACCESS, context.getHandler()) ??
      defaultOrgAccessLevel(req.method);
    const decision = decideOrgAccess(req.user, orgId, level, orgAccessAskOf(req.method));
    if (!decision.allowed) {
      // The same error an unknown org gives, so a foreign org looks exactly like a missing one.
      if (decision.status === 404) throw new IdentityException(IdentityExceptionCode.OrgNotFound, decision.message);
      throw new ForbiddenException(decision.message);
    }
    await this.identity.getOrganization(orgId);
    return true;
  }
}
