import { ForbiddenException } from '@nestjs/common';
import type { AdminPrincipal } from '@tollgate/identity';

/**
 * A user's connections are theirs: org admins manage anyone's, every other role only its own
 * (a MEMBER token acts for one user). The org and the role were checked by the OrgScopeGuard:
 * reading needs any role of the org, changing needs ManageOwn, which finance does not have.
 */
export function assertMayManageConnectionsOf(admin: AdminPrincipal, userId: string): void {
  if (admin.role === 'PLATFORM_ADMIN' || admin.role === 'ORG_ADMIN') return;
  if (admin.userId && admin.userId === userId) return;
  throw new ForbiddenException(
    `role ${admin.role} may only manage its own user’s connections; user ${userId} needs ORG_ADMIN`,
  );
}
