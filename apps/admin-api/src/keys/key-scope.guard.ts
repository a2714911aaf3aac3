import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { AdminPrincipal, IdentityException, IdentityExceptionCode, IdentityService } from '@tollgate/identity';
import type { Request } from 'express';
import { keyReachOf, reachesKey } from './key-access';
import { isUuid } from '@tollgate/kernel';

/**
 * Global guard for every route with an `:orgId` and a `:keyId`: a key outside the principal's
 * reach (another user's key for a member, another team's for a team admin) answers exactly as an
 * unknown key does (404 KEY_NOT_FOUND), so it learns nothing of it. Runs after the OrgScopeGuard,
 * which has checked the org and the role; a malformed id is left to the route's UUID pipe.
 */
@Injectable()
export class KeyScopeGuard implements CanActivate {
  constructor(private readonly identity: IdentityService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request & { user?: AdminPrincipal }>();
    const orgId: unknown = req.params?.orgId;
    const keyId: unknown = req.params?.keyId;
    if (typeof orgId !== 'string' || typeof keyId !== 'string' || !req.user) return true;
    if (!isUuid(orgId) || !isUuid(keyId)) return true;

    const reach = keyReachOf(req.user);
    // Org-wide reach: the route itself answers 404 for an unknown key.
    if (reach.kind === 'org') return true;
    const key = await this.identity.getVirtualKey(orgId, keyId);
    if (!reachesKey(reach, key))
      throw new IdentityException(IdentityExceptionCode.KeyNotFound, `key ${keyId} not found`, 'keyId');
    return true;
  }
}
