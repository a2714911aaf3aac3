import { ForbiddenException, Injectable } from '@nestjs/common';
import { BudgetAdminService } from '@tollgate/budget';
import { PrismaService } from '@tollgate/db';
import { AdminPrincipal, auditBy, IdentityService } from '@tollgate/identity';
import { toMicros } from '@tollgate/kernel';
import { RateLimitAdminService } from '@tollgate/rate-limit';
import { changes } from '../audit/audit-changes';
import { budgetPutAudit } from '../budgets/budget-audit';
import { BudgetView, toBudgetView } from '../budgets/budget.view';
import { rateLimitCreatedAudit } from '../rate-limits/rate-limit-audit';
import { RateLimitView, toRateLimitView } from '../rate-limits/rate-limit.view';
import { CreateKeyDto } from './create-key.dto';
import { LimitDecision, decideKeyBudget, decideKeyRateLimit } from './key-limits';
import { IssuedKeyView, KeyLimitsView, KeyView, toKeyView } from './key.view';
import { CreateKeyRateLimitDto, PutKeyBudgetDto, UpdateKeyDto } from './update-key.dto';

/**
 * The key routes' use cases: each change goes through its lib, which writes the audit row in the
 * change's own transaction (a key never exists, changes or dies without its row).
 */
@Injectable()
export class KeyAdminService {
  constructor(
    private readonly identity: IdentityService,
    private readonly budgets: BudgetAdminService,
    private readonly rateLimits: RateLimitAdminService,
    private readonly prisma: PrismaService,
  ) {}

  async createKey(admin: AdminPrincipal, orgId: string, dto: CreateKeyDto): Promise<IssuedKeyView> {
    const { key, secret } = await this.identity.createVirtualKey(
      orgId,
      {
        teamId: dto.teamId,
        userId: dto.userId,
        name: dto.name,
        expiresAt: dto.expiresAt ? new Date(dto.expiresAt) : null,
        disclosureMode: dto.disclosureMode ?? null,
        tags: dto.tags,
        metadata: dto.metadata,
      },
      {
        by: auditBy(admin),
        entry: (created) => ({
          orgId,
          action: 'key.created',
          targetType: 'virtual-key',
          targetId: created.id,
          details: {
            name: created.name,
            prefix: created.prefix,
            teamId: created.teamId,
            userId: created.userId,
            expiresAt: created.expiresAt,
            disclosureMode: created.disclosureMode,
            tags: created.tags,
          },
        }),
      },
    );
    return { key: toKeyView(key), secret };
  }

  async revokeKey(admin: AdminPrincipal, orgId: string, keyId: string): Promise<KeyView> {
    const key = await this.identity.revokeVirtualKey(orgId, keyId, {
      by: auditBy(admin),
      entry: (revoked) => ({
        orgId,
        action: 'key.revoked',
        targetType: 'virtual-key',
        targetId: revoked.id,
        details: { prefix: revoked.prefix },
      }),
    });
    return toKeyView(key);
  }

  async rotateKey(admin: AdminPrincipal, orgId: string, keyId: string): Promise<IssuedKeyView> {
    const { key, secret } = await this.identity.rotateVirtualKey(orgId, keyId, {
      by: auditBy(admin),
      entry: ({ before, after }) => ({
        orgId,
        action: 'key.rotated',
        targetType: 'virtual-key',
        targetId: after.id,
        details: { previousPrefix: before.prefix, prefix: after.prefix },
      }),
    });
    return { key: toKeyView(key), secret };
  }

  async updateKey(admin: AdminPrincipal, orgId: string, keyId: string, dto: UpdateKeyDto): Promise<KeyView> {
    const { after } = await this.identity.updateVirtualKey(
      orgId,
      keyId,
      {
        name: dto.name,
        tags: dto.tags,
        metadata: dto.metadata,
        disclosureMode: dto.disclosureMode,
        expiresAt: dto.expiresAt === undefined ? undefined : dto.expiresAt === null ? null : new Date(dto.expiresAt),
      },
      {
        by: auditBy(admin),
        entry: (changed) => ({
          orgId,
          action: 'key.updated',
          targetType: 'virtual-key',
          targetId: keyId,
          details: changes(changed.before, changed.after, ['name', 'tags', 'metadata', 'disclosureMode', 'expiresAt']),
        }),
      },
    );
    return toKeyView(after);
  }

  async keyLimits(orgId: string, keyId: string): Promise<KeyLimitsView> {
    await this.identity.getVirtualKey(orgId, keyId);
    const [budgets, rateLimits] = await Promise.all([
      this.prisma.budget.findMany({ where: { orgId, scope: 'KEY', scopeId: keyId }, orderBy: { period: 'asc' } }),
      this.prisma.rateLimit.findMany({ where: { orgId, scope: 'KEY', scopeId: keyId }, orderBy: { createdAt: 'asc' } }),
    ]);
    return { keyId, budgets: budgets.map(toBudgetView), rateLimits: rateLimits.map(toRateLimitView) };
  }

  /** A team admin may not give a key more than its team's budget of the same period. */
  async putKeyBudget(admin: AdminPrincipal, orgId: string, keyId: string, dto: PutKeyBudgetDto): Promise<BudgetView> {
    const key = await this.identity.getVirtualKey(orgId, keyId);
    const limitMicros = toMicros(dto.limitMicros);
    const teamBudgets = await this.prisma.budget.findMany({
      where: { orgId, scope: 'TEAM', scopeId: key.teamId },
      select: { period: true, limitMicros: true },
    });
    enforce(decideKeyBudget(admin, { period: dto.period, limitMicros }, teamBudgets));
    const { budget } = await this.budgets.putBudget(
      orgId,
      {
        scope: 'KEY',
        scopeId: keyId,
        period: dto.period,
        limitMicros,
        mode: dto.mode,
        alertThresholds: dto.alertThresholds,
      },
      budgetPutAudit(admin, orgId),
    );
    return toBudgetView(budget);
  }

  /** A team admin may not give a key a looser limit than its team's on the same tool pattern. */
  async createKeyRateLimit(
    admin: AdminPrincipal,
    orgId: string,
    keyId: string,
    dto: CreateKeyRateLimitDto,
  ): Promise<RateLimitView> {
    const key = await this.identity.getVirtualKey(orgId, keyId);
    const req = {
      toolPattern: dto.toolPattern ?? '*:*',
      windowSeconds: dto.windowSeconds ?? 60,
      callsPerWindow: dto.callsPerWindow ?? null,
      maxConcurrent: dto.maxConcurrent ?? null,
    };
    const teamLimits = await this.prisma.rateLimit.findMany({ where: { orgId, scope: 'TEAM', scopeId: key.teamId } });
    enforce(decideKeyRateLimit(admin, req, teamLimits));
    const rule = await this.rateLimits.createRateLimit(
      orgId,
      { scope: 'KEY', scopeId: keyId, ...req },
      rateLimitCreatedAudit(admin, orgId),
    );
    return toRateLimitView(rule);
  }
}

function enforce(decision: LimitDecision): void {
  // A role that may not, or a limit above the team's: 403, the message names the field and the team's figure.
  if (!decision.allowed) throw new ForbiddenException(decision.message);
}
