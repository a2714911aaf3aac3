import { AuditedBy, recordAudited } from '@tollgate/audit';
import { Injectable } from '@nestjs/common';
import { PriceRule, PrismaService } from '@tollgate/db';
import { Micros } from '@tollgate/kernel';
import { ORG_CONFIG_CHANGED_CHANNEL, RedisService } from '@tollgate/redis';
import { PriceBookException, PriceBookExceptionCode } from './price-book.exception';

export interface AddPriceRuleInput {
  upstreamId?: string | null;
  toolPattern?: string;
  perCallMicros: Micros;
  perOutputTokenMicros?: Micros;
  acceptReportedCost?: boolean;
  reportedCostCapMicros?: Micros;
  chargeFailedCalls?: boolean;
  effectiveFrom?: Date;
}

/**
 * A glob over a tool's name within its upstream (`*`, `search_*`, `echo`), or over what a resource
 * read or prompt get is priced under: `resource:<uri glob>`, `prompt:<name glob>`; a completion
 * under `completion:<prompt name or URI template glob>`, a resource subscription under
 * `subscription:<uri glob>`.
 */
const TOOL_NAME_GLOB =
  /^(?:[A-Za-z0-9_*?.\-/]{1,200}|resource:\S{1,500}|prompt:[A-Za-z0-9_*?.\-/]{1,200}|completion:\S{1,500}|subscription:\S{1,500})$/;

// Clocks of the admin API and its client differ a little; "now" from a client may arrive late.
const EFFECTIVE_FROM_SKEW_MS = 60_000;
// Beyond every amount Tollgate handles, and below 2^53 so it stays a JSON integer.
export const MAX_PRICE_MICROS = 1_000_000_000_000_000n;

/**
 * Checks a new rule against the price book's rules: non-negative integer amounts, a tool-name
 * glob, and an effective date not in the past (rules are append-only, so the book always shows
 * what was charged when). Returns the first problem found, or null.
 */
export function validatePriceRule(input: AddPriceRuleInput, now: Date): { field: string; message: string } | null {
  const pattern = input.toolPattern ?? '*';
  if (!TOOL_NAME_GLOB.test(pattern)) {
    return {
      field: 'toolPattern',
      message: `toolPattern "${pattern}" must be a glob over tool names (letters, digits, _ . - /, * and ?, at most 200 characters), or resource:<uri glob>, prompt:<name glob>, completion:<prompt or URI template glob>, subscription:<uri glob>`,
    };
  }
  const amounts: [string, Micros | undefined][] = [
    ['perCallMicros', input.perCallMicros],
    ['perOutputTokenMicros', input.perOutputTokenMicros],
    ['reportedCostCapMicros', input.reportedCostCapMicros],
  ];
  for (const [field, value] of amounts) {
    if (value === undefined) continue;
    if (value < 0n) return { field, message: `${field} must not be negative` };
    if (value > MAX_PRICE_MICROS) return { field, message: `${field} must be at most ${MAX_PRICE_MICROS} micro-units` };
  }
  if (input.acceptReportedCost && (input.reportedCostCapMicros ?? 0n) === 0n) {
    return {
      field: 'reportedCostCapMicros',
      message:
        'reportedCostCapMicros must be set (> 0) when acceptReportedCost is true, or reported costs would always count as 0',
    };
  }
  if (input.effectiveFrom && input.effectiveFrom.getTime() < now.getTime() - EFFECTIVE_FROM_SKEW_MS) {
    return {
      field: 'effectiveFrom',
      message:
        'effectiveFrom must not be in the past: price rules are append-only, add a rule that takes effect now or later',
    };
  }
  return null;
}

/** A rule as ended, and the end it had before. */
export interface EndedPriceRule {
  rule: PriceRule;
  previousUntil: Date | null;
}

/**
 * The admin side of the price book: rules are only ever added. A price change is a new rule with
 * a later `effectiveFrom`, so a past call can always be explained by the rule in force then.
 */
@Injectable()
export class PriceBookService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
  ) {}

  async addPriceRule(
    orgId: string,
    input: AddPriceRuleInput,
    audit: AuditedBy<PriceRule>,
    now = new Date(),
  ): Promise<PriceRule> {
    const bad = validatePriceRule(input, now);
    if (bad) throw new PriceBookException(PriceBookExceptionCode.InvalidRule, bad.message, bad.field);
    if (input.upstreamId) {
      const exists = await this.prisma.upstreamServer.count({ where: { orgId, id: input.upstreamId } });
      if (exists === 0)
        throw new PriceBookException(
          PriceBookExceptionCode.UpstreamNotFound,
          `upstream ${input.upstreamId} not found`,
          'upstreamId',
        );
    }
    const rule = await this.prisma.$transaction(async (tx) => {
      const added = await tx.priceRule.create({
        data: {
          orgId,
          upstreamId: input.upstreamId ?? null,
          toolPattern: input.toolPattern ?? '*',
          perCallMicros: input.perCallMicros,
          perOutputTokenMicros: input.perOutputTokenMicros ?? 0n,
          acceptReportedCost: input.acceptReportedCost ?? false,
          reportedCostCapMicros: input.reportedCostCapMicros ?? 0n,
          chargeFailedCalls: input.chargeFailedCalls ?? false,
          effectiveFrom: input.effectiveFrom ?? now,
        },
      });
      await recordAudited(tx, audit, added);
      return added;
    });
    await this.redis.publish(ORG_CONFIG_CHANGED_CHANNEL, orgId);
    return rule;
  }

  /**
   * Ends a rule from `until` (default now): calls from then on are priced by the next rule in line
   * (or free). Never edits the past: `until` may not be earlier than now, and a rule that has
   * already ended stays as it is.
   */
  async endPriceRule(
    orgId: string,
    ruleId: string,
    until: Date | undefined,
    audit: AuditedBy<EndedPriceRule>,
    now = new Date(),
  ): Promise<EndedPriceRule> {
    const rule = await this.prisma.priceRule.findFirst({ where: { orgId, id: ruleId } });
    if (!rule)
      throw new PriceBookException(PriceBookExceptionCode.RuleNotFound, `price rule ${ruleId} not found`, 'ruleId');
    const end = until ?? now;
    if (end.getTime() < now.getTime() - EFFECTIVE_FROM_SKEW_MS) {
      throw new PriceBookException(
        PriceBookExceptionCode.InvalidRule,
        'effectiveUntil must not be in the past: past calls keep the price they were charged',
        'effectiveUntil',
      );
    }
    if (rule.effectiveUntil && rule.effectiveUntil.getTime() <= now.getTime()) {
      throw new PriceBookException(
        PriceBookExceptionCode.InvalidRule,
        `the rule already ended at ${rule.effectiveUntil.toISOString()}; add a new rule instead`,
        'effectiveUntil',
      );
    }
    if (end.getTime() < rule.effectiveFrom.getTime()) {
      throw new PriceBookException(
        PriceBookExceptionCode.InvalidRule,
        `effectiveUntil must not be before the rule's effectiveFrom (${rule.effectiveFrom.toISOString()})`,
        'effectiveUntil',
      );
    }
    // Conditional on the end read above, so two concurrent ends cannot move a past end.
    const ended = await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.priceRule.updateMany({
        where: { id: rule.id, effectiveUntil: rule.effectiveUntil },
        data: { effectiveUntil: end },
      });
      if (count === 0)
        throw new PriceBookException(
          PriceBookExceptionCode.InvalidRule,
          'the rule was ended by another request meanwhile; read it again',
          'effectiveUntil',
        );
      const result = {
        rule: await tx.priceRule.findUniqueOrThrow({ where: { id: rule.id } }),
        previousUntil: rule.effectiveUntil,
      };
      await recordAudited(tx, audit, result);
      return result;
    });
    await this.redis.publish(ORG_CONFIG_CHANGED_CHANNEL, orgId);
    return ended;
  }

  /** Every rule of the organisation, ended ones included, oldest effective date first (the book's history). */
  priceHistory(orgId: string, filter: { upstreamId?: string; toolPattern?: string } = {}): Promise<PriceRule[]> {
    return this.prisma.priceRule.findMany({
      where: {
        orgId,
        ...(filter.upstreamId ? { upstreamId: filter.upstreamId } : {}),
        ...(filter.toolPattern ? { toolPattern: filter.toolPattern } : {}),
      },
      orderBy: [{ effectiveFrom: 'asc' }, { createdAt: 'asc' }],
    });
  }

  /** Every rule of the organisation, newest effective date first. */
  listPriceRules(orgId: string, filter: { upstreamId?: string } = {}): Promise<PriceRule[]> {
    return this.prisma.priceRule.findMany({
      where: { orgId, ...(filter.upstreamId ? { upstreamId: filter.upstreamId } : {}) },
      orderBy: [{ effectiveFrom: 'desc' }, { createdAt: 'desc' }],
    });
  }
}
