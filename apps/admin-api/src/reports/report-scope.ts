import { ForbiddenException } from '@nestjs/common';
import type { AdminPrincipal } from '@tollgate/identity';
import { ORG_SCOPE, ReportScope } from '@tollgate/reporting';

/**
 * Whose spend and budgets a caller may read (the spend reports and GET /budgets): org admins,
 * finance and platform admins the whole org; a team admin its team's calls; a member their own.
 * A token of those two roles that names no team or user has nothing to read (403).
 */
export function reportScopeOf(admin: AdminPrincipal): ReportScope {
  switch (admin.role) {
    case 'PLATFORM_ADMIN':
    case 'ORG_ADMIN':
    case 'FINANCE':
      return ORG_SCOPE;
    case 'TEAM_ADMIN':
      if (!admin.teamId)
        throw new ForbiddenException('this TEAM_ADMIN token names no team, so it has no spend or budgets to read');
      return { kind: 'team', id: admin.teamId };
    case 'MEMBER':
      if (!admin.userId)
        throw new ForbiddenException('this MEMBER token names no user, so it has no spend or budgets to read');
      return { kind: 'user', id: admin.userId };
    default: {
      const role: never = admin.role;
      throw new ForbiddenException(`role ${String(role)} may not read reports`);
    }
  }
}
