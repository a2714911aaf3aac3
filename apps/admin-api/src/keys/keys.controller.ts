import {
  Body,
  Controller,
  ForbiddenException,
  Get,
  HttpCode,
  HttpStatus,
  Patch,
  Post,
  Put,
  Query,
} from '@nestjs/common';
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
import { AdminPrincipal, IdentityService, parseKeySort } from '@tollgate/identity';
import { BudgetView } from '../budgets/budget.view';
import { RateLimitView } from '../rate-limits/rate-limit.view';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { CreateKeyDto } from './create-key.dto';
import { KeyAdminService } from './key-admin.service';
import { decideKeyCreation, keyListFilter, keyReachOf } from './key-access';
import { KeyPageQuery } from './key-page.query';
import { IssuedKeyView, KeyLimitsView, KeyPageView, KeyView, toKeyView } from './key.view';
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
    private readonly keys: KeyAdminService,
    private readonly identity: IdentityService,
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
    return this.keys.createKey(admin, orgId, dto);
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

  // Before ':keyId', so `page` is not read as a key id.
  @Get('page')
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({
    summary:
      'A page of the keys the caller reaches, filtered by a search, a tag, a list of ids and whether revoked or expired keys count; with the total, the tags in reach and the page’s team and owner names',
  })
  @ApiOkResponse({ type: KeyPageView })
  @ApiBadRequestResponse({ type: ErrorBodyView, description: 'A query value out of range, naming it' })
  async pageKeys(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Query() query: KeyPageQuery,
  ): Promise<KeyPageView> {
    const limit = query.limit ?? 50;
    const offset = query.offset ?? 0;
    const filter = keyListFilter(keyReachOf(admin));
    if (!filter) return { keys: [], total: 0, offset, limit, tags: [], names: [] };
    const page = await this.identity.pageVirtualKeys(orgId, filter, {
      search: query.search,
      tag: query.tag,
      ids: query.ids ? [...new Set(query.ids.toLowerCase().split(','))] : undefined,
      inactive: query.inactive,
      sort: query.sort ? parseKeySort(query.sort) : undefined,
      limit,
      offset,
      now: new Date(),
    });
    return { ...page, keys: page.keys.map(toKeyView), offset, limit };
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
    return this.keys.revokeKey(admin, orgId, keyId);
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
    return this.keys.rotateKey(admin, orgId, keyId);
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
    return this.keys.updateKey(admin, orgId, keyId, dto);
  }

  @Get(':keyId/limits')
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: 'The budgets and rate limits set on a key' })
  @ApiOkResponse({ type: KeyLimitsView })
  async getKeyLimits(@UuidParam('orgId') orgId: string, @UuidParam('keyId') keyId: string): Promise<KeyLimitsView> {
    return this.keys.keyLimits(orgId, keyId);
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
    return this.keys.putKeyBudget(admin, orgId, keyId, dto);
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
    return this.keys.createKeyRateLimit(admin, orgId, keyId, dto);
  }
}
