import { Body, Controller, ForbiddenException, Get, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiBadRequestResponse, ApiBearerAuth, ApiConflictResponse, ApiCreatedResponse, ApiForbiddenResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminPrincipal, IdentityService } from '@tollgate/identity';
import { AuditService } from '../audit/audit.service';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/error-body.view';
import { UuidParam } from '../common/uuid-param.decorator';
import { CreateKeyDto } from './create-key.dto';
import { decideKeyCreation, keyListFilter, keyReachOf } from './key-access';
import { IssuedKeyView, KeyView, toKeyView } from './key.view';

@ApiTags('virtual keys')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization, team, user or key, or a key outside the caller’s reach' })
@ApiForbiddenResponse({ type: ErrorBodyView, description: 'The role may not change keys, or not for this team or user' })
// Every :keyId route answers 404 for a key outside the caller's reach: the global KeyScopeGuard.
@Controller('v1/orgs/:orgId/keys')
export class KeysController {
  constructor(
    private readonly identity: IdentityService,
    private readonly audit: AuditService,
  ) {}

  @Post()
  @HttpCode(HttpStatus.CREATED)
  @OrgAccess(OrgAccessLevel.ManageOwn)
  @ApiOperation({ summary: 'Create a virtual key (a member for itself, a team admin in its team); the secret is in this answer only' })
  @ApiCreatedResponse({ type: IssuedKeyView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  async createKey(@CurrentAdmin() admin: AdminPrincipal, @UuidParam('orgId') orgId: string, @Body() dto: CreateKeyDto): Promise<IssuedKeyView> {
    const decision = decideKeyCreation(admin, dto);
    if (!decision.allowed) throw new ForbiddenException(decision.message);
    const { key, secret } = await this.identity.createVirtualKey(orgId, {
      teamId: dto.teamId,
      userId: dto.userId,
      name: dto.name,
      expiresAt: dto.expiresAt ? new Date(dto.expiresAt) : null,
      disclosureMode: dto.disclosureMode ?? null,
    });
    await this.audit.record(admin, {
      orgId,
      action: 'key.created',
      targetType: 'virtual-key',
      targetId: key.id,
      details: { name: key.name, prefix: key.prefix, teamId: key.teamId, userId: key.userId, expiresAt: key.expiresAt, disclosureMode: key.disclosureMode },
    });
    return { key: toKeyView(key), secret };
  }

  @Get()
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: 'List the virtual keys of an organization the caller reaches: all, its team’s (team admin) or its own (member); never their secrets' })
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
  async revokeKey(@CurrentAdmin() admin: AdminPrincipal, @UuidParam('orgId') orgId: string, @UuidParam('keyId') keyId: string): Promise<KeyView> {
    const key = await this.identity.revokeVirtualKey(orgId, keyId);
    await this.audit.record(admin, { orgId, action: 'key.revoked', targetType: 'virtual-key', targetId: key.id, details: { prefix: key.prefix } });
    return toKeyView(key);
  }

  @Post(':keyId/rotate')
  @HttpCode(HttpStatus.OK)
  @OrgAccess(OrgAccessLevel.ManageOwn)
  @ApiOperation({
    summary: 'Give a key a new secret under the same id (budgets, policies, limits and spend carry over); the old secret stops working on every edge at once',
  })
  @ApiOkResponse({ type: IssuedKeyView })
  @ApiConflictResponse({ type: ErrorBodyView, description: 'The key is revoked (KEY_REVOKED)' })
  async rotateKey(@CurrentAdmin() admin: AdminPrincipal, @UuidParam('orgId') orgId: string, @UuidParam('keyId') keyId: string): Promise<IssuedKeyView> {
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
}
