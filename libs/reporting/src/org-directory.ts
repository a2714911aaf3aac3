import type { PrismaService } from '@tollgate/db';
import { budgetClock } from '@tollgate/kernel';

/**
 * The organisation's budget clock (its zone, or after a zone change the previous zone and the
 * instant, so periods running then keep their bounds: kernel budgetClock), or null if it is gone.
 */
export async function orgTimeZone(prisma: PrismaService, orgId: string): Promise<string | null> {
  const org = await prisma.organization.findUnique({
    where: { id: orgId },
    select: { timeZone: true, previousTimeZone: true, timeZoneChangedAt: true },
  });
  return org ? budgetClock(org.timeZone, org.previousTimeZone, org.timeZoneChangedAt) : null;
}

/** Organisations that have at least one budget: the only ones scheduled checks need to visit. */
export async function orgsWithBudgets(prisma: PrismaService): Promise<string[]> {
  const rows = await prisma.budget.findMany({ distinct: ['orgId'], select: { orgId: true } });
  return rows.map((r) => r.orgId);
}
