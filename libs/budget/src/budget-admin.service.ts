import { Injectable } from '@nestjs/common';
import { AuditedBy, recordAudited } from '@tollgate/audit';
import { Budget, PrismaService, scopeBelongsToOrg } from '@tollgate/db';
import { Micros, PeriodKind, StaleWriteException } from '@tollgate/kernel';
import { ORG_CONFIG_CHANGED_CHANNEL, RedisService } from '@tollgate/redis';
import { BudgetScope } from './budget.service';
import { BudgetAdminException, BudgetAdminExceptionCode } from './budget-admin.exception';

export interface PutBudgetInput {
  scope: BudgetScope;
  scopeId: string;
  period: PeriodKind;
  limitMicros: Micros;
  mode?: 'HARD' | 'SOFT';
  alertThresholds?: number[];
}

/** A budget as put: the row, and whether it was new. */
export interface PutBudgetResult {
  budget: Budget;
  created: boolean;
}

export const DEFAULT_ALERT_THRESHOLDS = [80, 100];
// Soft budgets can run past 100%, so thresholds above it are meaningful.
export const MAX_ALERT_THRESHOLD = 1000;
export const MAX_ALERT_THRESHOLDS = 10;
export const MAX_BUDGET_MICROS = 1_000_000_000_000_000n;

/** Sorted, de-duplicated thresholds, or the problem with them. */
export function normalizeAlertThresholds(
  thresholds: readonly number[] | undefined,
): { ok: true; value: number[] } | { ok: false; message: string } {
  if (thresholds === undefined) return { ok: true, value: [...DEFAULT_ALERT_THRESHOLDS] };
  if (thresholds.length > MAX_ALERT_THRESHOLDS)
    return { ok: false, message: `alertThresholds holds at most ${MAX_ALERT_THRESHOLDS} entries` };
  for (const t of thresholds) {
    if (!Number.isInteger(t) || t < 1 || t > MAX_ALERT_THRESHOLD) {
      return {
        ok: false,
        message: `alertThresholds entries are whole percentages from 1 to ${MAX_ALERT_THRESHOLD}, got ${t}`,
      };
    }
  }
  return { ok: true, value: [...new Set(thresholds)].sort((a, b) => a - b) };
}

/**
 * Admin-side writes of budgets: one budget per org, scope, scope id and period, upserted.
 * Counters in Redis are keyed by budget id and period start, so a new limit applies to the
 * spend already counted. Every change is announced on `org-config-changed`.
 */
@Injectable()
export class BudgetAdminService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
  ) {}

  /** Upserts; with `expectedVersion` only that version of an existing budget is updated (else StaleWriteException). */
  async putBudget(
    orgId: string,
    input: PutBudgetInput,
    audit: AuditedBy<PutBudgetResult>,
    expectedVersion?: number,
  ): Promise<PutBudgetResult> {
    if (input.limitMicros < 0n)
      throw new BudgetAdminException(
        BudgetAdminExceptionCode.InvalidBudget,
        'limitMicros must not be negative',
        'limitMicros',
      );
    if (input.limitMicros > MAX_BUDGET_MICROS) {
      throw new BudgetAdminException(
        BudgetAdminExceptionCode.InvalidBudget,
        `limitMicros must be at most ${MAX_BUDGET_MICROS}`,
        'limitMicros',
      );
    }
    const thresholds = normalizeAlertThresholds(input.alertThresholds);
    if (!thresholds.ok)
      throw new BudgetAdminException(BudgetAdminExceptionCode.InvalidBudget, thresholds.message, 'alertThresholds');
    await this.assertScopeInOrg(orgId, input.scope, input.scopeId);

    const key = { orgId, scope: input.scope, scopeId: input.scopeId, period: input.period };
    const data = { limitMicros: input.limitMicros, mode: input.mode ?? 'HARD', alertThresholds: thresholds.value };
    const result = await this.prisma.$transaction(async (tx) => {
      const existing = await tx.budget.findUnique({
        where: { orgId_scope_scopeId_period: key },
        select: { id: true, version: true },
      });
      if (expectedVersion !== undefined) {
        const { count } = await tx.budget.updateMany({
          where: { ...key, version: expectedVersion },
          data: { ...data, version: { increment: 1 } },
        });
        if (count === 0)
          throw new StaleWriteException(
            'budget',
            expectedVersion,
            (await tx.budget.findUnique({ where: { orgId_scope_scopeId_period: key } }))?.version ?? null,
          );
      }
      const budget =
        expectedVersion !== undefined
          ? await tx.budget.findUniqueOrThrow({ where: { orgId_scope_scopeId_period: key } })
          : await tx.budget.upsert({
              where: { orgId_scope_scopeId_period: key },
              create: { ...key, ...data },
              update: { ...data, version: { increment: 1 } },
            });
      const put = { budget, created: !existing };
      await recordAudited(tx, audit, put);
      return put;
    });
    await this.redis.publish(ORG_CONFIG_CHANGED_CHANNEL, orgId);
    return result;
  }

  listBudgets(orgId: string): Promise<Budget[]> {
    return this.prisma.budget.findMany({
      where: { orgId },
      orderBy: [{ scope: 'asc' }, { period: 'asc' }, { createdAt: 'asc' }],
    });
  }

  async getBudget(orgId: string, budgetId: string): Promise<Budget> {
    const budget = await this.prisma.budget.findFirst({ where: { orgId, id: budgetId } });
    if (!budget)
      throw new BudgetAdminException(
        BudgetAdminExceptionCode.BudgetNotFound,
        `budget ${budgetId} not found`,
        'budgetId',
      );
    return budget;
  }

  async deleteBudget(orgId: string, budgetId: string, audit: AuditedBy<Budget>): Promise<Budget> {
    const budget = await this.getBudget(orgId, budgetId);
    await this.prisma.$transaction(async (tx) => {
      await tx.budget.deleteMany({ where: { orgId, id: budgetId } });
      await recordAudited(tx, audit, budget);
    });
    await this.redis.publish(ORG_CONFIG_CHANGED_CHANNEL, orgId);
    return budget;
  }

  private async assertScopeInOrg(orgId: string, scope: BudgetScope, scopeId: string): Promise<void> {
    if (!(await scopeBelongsToOrg(this.prisma, orgId, scope, scopeId))) {
      throw new BudgetAdminException(
        BudgetAdminExceptionCode.ScopeNotFound,
        `${scope.toLowerCase()} ${scopeId} not found in this organization`,
        'scopeId',
      );
    }
  }
}
