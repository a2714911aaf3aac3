import type { PrismaClient } from '@prisma/client';
import type { TenantLevel } from '@tollgate/kernel';

export type TenantScope = TenantLevel;

/** Whether a scope id (the org itself, or one of its teams, users or keys) belongs to the org. */
export async function scopeBelongsToOrg(
  prisma: Pick<PrismaClient, 'organization' | 'team' | 'user' | 'virtualKey'>,
  orgId: string,
  scope: TenantScope,
  scopeId: string,
): Promise<boolean> {
  switch (scope) {
    case 'ORG':
      return scopeId === orgId && (await prisma.organization.count({ where: { id: orgId } })) > 0;
    case 'TEAM':
      return (await prisma.team.count({ where: { orgId, id: scopeId } })) > 0;
    case 'USER':
      return (await prisma.user.count({ where: { orgId, id: scopeId } })) > 0;
    case 'KEY':
      return (await prisma.virtualKey.count({ where: { orgId, id: scopeId } })) > 0;
  }
}
