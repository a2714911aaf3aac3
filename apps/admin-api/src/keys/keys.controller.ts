import { Body, Controller, ForbiddenException, Get, HttpCode, HttpStatus, Patch, Post, Put } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { BudgetAdminService } from '@tollgate/budget';
import { PrismaService } from '@tollgate/db';
import { AdminPrincipal, IdentityService } from '@tollgate/identity';
import { toMicros } from '@tollgate/kernel';
import { RateLimitAdminService } from '@tollgate/rate-limit';
import { changes } from '../audit/audit-changes';
import { BudgetView, toBudgetView } from '../budgets/budget.view';
import { RateLimitView, toRateLimitView } from '../rate-limits/rate-limit.view';
import { AuditService } from '../audit/audit.service';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/error-body.view';
import { UuidParam } from '../common/uuid-param.decorator';
import { CreateKeyDto } from './create-key.dto';
import { decideKeyCreation, keyListFilter, keyReachOf } from './key-access';
import { LimitDecision, decideKeyBudget, decideKeyRateLimit } from './key-limits';
import { IssuedKeyView, KeyLimitsView, KeyView, toKeyView } from './key.view';
import { CreateKeyRateLimitDto, PutKeyBudgetDto, UpdateKeyDto } from './update-key.dto';

@ApiTags('virtual keys')
@ApiBearerAuth()
@ApiNotFoundResponse({
  type: ErrorBodyView,
  description: 'Unknown organization, team, user or key, or a key outside the caller’s reach',
})
@ApiForbiddenResponse({
  type: ErrorBodyView,
  description: 'The role may not change keys, or not for this team or user',
})
// Every :keyId route answers 404 for a key outside the caller's reach: the global KeyScopeGuard.
@Controller('v1/orgs/:orgId/keys')
export class KeysController {
  constructor(
    private readonly identity: IdentityService,
    private readonly budgets: BudgetAdminService,
    private readonly rateLimits: RateLimitAdminService,
    private readonly prisma: PrismaService,
    private readonly audit: AuditService,
  ) {}

  @Post()
  @HttpCode(HttpStatus.CREATED)
  @OrgAccess(OrgAccessLevel.ManageOwn)
  @ApiOperation({
    summary: 'Create a virtual key (a member for itself, a team admin in its team); the secret is in this answer only',
  })
  @ApiCreatedResponse({ type: IssuedKeyView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  async createKey(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Body() dto: CreateKeyDto,
  ): Promise<IssuedKeyView> {
    const decision = decideKeyCreation(admin, dto);
    if (!decision.allowed) throw new ForbiddenException(decision.message);
    const { key, secret } = await this.identity.createVirtualKey(orgId, {
      teamId: dto.teamId,
      userId: dto.userId,
      name: dto.name,
      expiresAt: dto.expiresAt ? new Date(dto.expiresAt) : null,
      disclosureMode: dto.disclosureMode ?? null,
      tags: dto.tags,
      metadata: dto.metadata,
    });
    await this.audit.record(admin, {
      orgId,
      action: 'key.created',
      targetType: 'virtual-key',
      targetId: key.id,
      details: {
        name: key.name,
        prefix: key.prefix,
        teamId: key.teamId,
        userId: key.userId,
        expiresAt: key.expiresAt,
        disclosureMode: key.disclosureMode,
        tags: key.tags,
      },
    });
    return { key: toKeyView(key), secret };
  }

  @Get()
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({
    summary:
      'List the virtual keys of an organization the caller reaches: all, its team’s (team admin) or its own (member); never their secrets',
  })
  @ApiOkResponse({ type: [KeyView] })
  async listKeys(@CurrentAdmin() admin: AdminPrincipal, @UuidParam('orgId') orgId: string): Promise<KeyView[]> {
    const filter = keyListFilter(keyReachOf(admin));
    if (!filter) return [];
    return (await this.identity.listVirtualKeys(orgId, filter)).map(toKeyView);
  }

  @Get(':keyId')
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: 'Get a virtual key (never its secret)' })
  @ApiOkResponse({ type: KeyView })
  async getKey(@UuidParam('orgId') orgId: string, @UuidParam('keyId') keyId: string): Promise<KeyView> {
    return toKeyView(await this.identity.getVirtualKey(orgId, keyId));
  }

  @Post(':keyId/revoke')
  @HttpCode(HttpStatus.OK)
  @OrgAccess(OrgAccessLevel.ManageOwn)
  @ApiOperation({ summary: 'Revoke a virtual key; every edge stops accepting it within a second' })
  @ApiOkResponse({ type: KeyView })
  async revokeKey(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('keyId') keyId: string,
  ): Promise<KeyView> {
    const key = await this.identity.revokeVirtualKey(orgId, keyId);
    await this.audit.record(admin, {
      orgId,
      action: 'key.revoked',
      targetType: 'virtual-key',
      targetId: key.id,
      details: { prefix: key.prefix },
    });
    return toKeyView(key);
  }

  @Post(':keyId/rotate')
  @HttpCode(HttpStatus.OK)
  @OrgAccess(OrgAccessLevel.ManageOwn)
  @ApiOperation({
    summary:
      'Give a key a new secret under the same id (budgets, policies, limits and spend carry over); the old secret stops working on every edge at once',
  })
  @ApiOkResponse({ type: IssuedKeyView })
  @ApiConflictResponse({ type: ErrorBodyView, description: 'The key is revoked (KEY_REVOKED)' })
  async rotateKey(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('keyId') keyId: string,
  ): Promise<IssuedKeyView> {
    const before = await this.identity.getVirtualKey(orgId, keyId);
    const { key, secret } = await this.identity.rotateVirtualKey(orgId, keyId);
    await this.audit.record(admin, {
      orgId,
      action: 'key.rotated',
      targetType: 'virtual-key',
      targetId: key.id,
      details: { previousPrefix: before.prefix, prefix: key.prefix },
    });
    return { key: toKeyView(key), secret };
  }

  @Patch(':keyId')
  @OrgAccess(OrgAccessLevel.ManageOwn)
  @ApiOperation({
    summary:
      'Rename a key, set its tags or metadata, change its disclosure mode or expiry; every edge sees the change on the key’s next request',
  })
  @ApiOkResponse({ type: KeyView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  @ApiConflictResponse({ type: ErrorBodyView, description: 'The key is revoked (KEY_REVOKED)' })
  async updateKey(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('keyId') keyId: string,
    @Body() dto: UpdateKeyDto,
  ): Promise<KeyView> {
    // An expiry is the admins' to set: a member could otherwise lift one put on its key.
    if (dto.expiresAt !== undefined && (admin.role === 'MEMBER' || admin.role === 'FINANCE')) {
      throw new ForbiddenException(
        `role ${admin.role} may not change a key's expiresAt; it needs ORG_ADMIN or the team's TEAM_ADMIN`,
      );
    }
    const { before, after } = await this.identity.updateVirtualKey(orgId, keyId, {
      name: dto.name,
      tags: dto.tags,
      metadata: dto.metadata,
      disclosureMode: dto.disclosureMode,
      expiresAt: dto.expiresAt === undefined ? undefined : dto.expiresAt === null ? null : new Date(dto.expiresAt),
    });
    await this.audit.record(admin, {
      orgId,
      action: 'key.updated',
      targetType: 'virtual-key',
      targetId: keyId,
      details: changes(before, after, ['name', 'tags', 'metadata', 'disclosureMode', 'expiresAt']),
    });
    return toKeyView(after);
  }

  @Get(':keyId/limits')
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: 'The budgets and rate limits set on a key' })
  @ApiOkResponse({ type: KeyLimitsView })
  async getKeyLimits(@UuidParam('orgId') orgId: string, @UuidParam('keyId') keyId: string): Promise<KeyLimitsView> {
    await this.identity.getVirtualKey(orgId, keyId);
    const [budgets, rateLimits] = await Promise.all([
      this.prisma.budget.findMany({ where: { orgId, scope: 'KEY', scopeId: keyId }, orderBy: { period: 'asc' } }),
      this.prisma.rateLimit.findMany({ where: { orgId, scope: 'KEY', scopeId: keyId }, orderBy: { createdAt: 'asc' } }),
    ]);
    return { keyId, budgets: budgets.map(toBudgetView), rateLimits: rateLimits.map(toRateLimitView) };
  }

  @Put(':keyId/budget')
  @OrgAccess(OrgAccessLevel.ManageOwn)
  @ApiOperation({
    summary:
      'Set a key’s budget for a period (org admins; team admins on their team’s keys, up to the team’s budget of the same period)',
  })
  @ApiOkResponse({ type: BudgetView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  async putKeyBudget(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('keyId') keyId: string,
    @Body() dto: PutKeyBudgetDto,
  ): Promise<BudgetView> {
    const key = await this.identity.getVirtualKey(orgId, keyId);
    const limitMicros = toMicros(dto.limitMicros);
    const teamBudgets = await this.prisma.budget.findMany({
      where: { orgId, scope: 'TEAM', scopeId: key.teamId },
      select: { period: true, limitMicros: true },
    });
    enforce(decideKeyBudget(admin, { period: dto.period, limitMicros }, teamBudgets));
    const { budget, created } = await this.budgets.putBudget(orgId, {
      scope: 'KEY',
      scopeId: keyId,
      period: dto.period,
      limitMicros,
      mode: dto.mode,
      alertThresholds: dto.alertThresholds,
    });
    const view = toBudgetView(budget);
    await this.audit.record(admin, {
      orgId,
      action: created ? 'budget.created' : 'budget.updated',
      targetType: 'budget',
      targetId: budget.id,
      details: { ...view },
    });
    return view;
  }

  @Post(':keyId/rate-limits')
  @HttpCode(HttpStatus.CREATED)
  @OrgAccess(OrgAccessLevel.ManageOwn)
  @ApiOperation({
    summary:
      'Add a rate limit to a key (org admins; team admins on their team’s keys, not above the team’s limits on the same tool pattern)',
  })
  @ApiCreatedResponse({ type: RateLimitView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  async createKeyRateLimit(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('keyId') keyId: string,
    @Body() dto: CreateKeyRateLimitDto,
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
    const rule = await this.rateLimits.createRateLimit(orgId, { scope: 'KEY', scopeId: keyId, ...req });
    const view = toRateLimitView(rule);
    await this.audit.record(admin, {
      orgId,
      action: 'rate-limit.created',
      targetType: 'rate-limit',
      targetId: rule.id,
      details: { ...view },
    });
    return view;
  }
}

function enforce(decision: LimitDecision): void {
  // A role that may not, or a limit above the team's: 403, the message names the field and the team's figure.
  if (!decision.allowed) throw new ForbiddenException(decision.message);
}
