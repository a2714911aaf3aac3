import type { PrismaService } from '@tollgate/db';

/** The organisation's time zone (budget periods are calendar periods there), or null if it is gone. */
export async function orgTimeZone(prisma: PrismaService, orgId: string): Promise<string | null> {
  const org = await prisma.organization.findUnique({ where: { id: orgId }, select: { timeZone: true } });
  return org?.timeZone ?? null;
}

/** Organisations that have at least one budget: the only ones scheduled checks need to visit. */
export async function orgsWithBudgets(prisma: PrismaService): Promise<string[]> {
  const rows = await prisma.budget.findMany({ distinct: ['orgId'], select: { orgId: true } });
  return rows.map((r) => r.orgId);
}
