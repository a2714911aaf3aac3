import {
  Body,
  Controller,
  Delete,
  ForbiddenException,
  Get,
  HttpCode,
  HttpStatus,
  Patch,
  Post,
  Query,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { AdminPrincipal, AdminTokenService, IdentityException, IdentityExceptionCode } from '@tollgate/identity';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { FieldValidationException } from '../common/errors/field-validation.exception';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { AdminTokenAdminService } from './admin-token-admin.service';
import { decideAdminTokenGrant } from './admin-token-grant';
import { AdminTokenView, toAdminTokenView } from './admin-token.view';
import { CreateAdminTokenDto, ListAdminTokensQuery, UpdateAdminTokenDto } from './create-admin-token.dto';
import { IssuedAdminTokenView } from './issued-admin-token.view';

@ApiTags('admin tokens')
@ApiBearerAuth()
@Controller('v1/admin-tokens')
export class AdminTokensController {
  constructor(
    private readonly admins: AdminTokenAdminService,
    private readonly tokens: AdminTokenService,
  ) {}

  @Post()
  @HttpCode(HttpStatus.CREATED)
  @ApiOperation({ summary: 'Issue an admin token; the secret is in this answer only' })
  @ApiCreatedResponse({ type: IssuedAdminTokenView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  @ApiForbiddenResponse({ type: ErrorBodyView })
  async issueAdminToken(
    @CurrentAdmin() admin: AdminPrincipal,
    @Body() dto: CreateAdminTokenDto,
  ): Promise<IssuedAdminTokenView> {
    const grant = decideAdminTokenGrant(admin, dto);
    if (!grant.allowed) {
      if (grant.status === 400) throw new FieldValidationException(grant.field ?? 'role', [grant.message]);
      if (grant.status === 404)
        throw new IdentityException(IdentityExceptionCode.OrgNotFound, grant.message, grant.field);
      throw new ForbiddenException(grant.message);
    }
    return this.admins.issue(admin, grant.orgId, dto);
  }

  @Get()
  @ApiOperation({
    summary:
      'List admin tokens with role, owner, creation, last use and expiry (platform admins: all or one org’s; org admins: their org’s); never secrets',
  })
  @ApiOkResponse({ type: [AdminTokenView] })
  @ApiForbiddenResponse({ type: ErrorBodyView })
  async listAdminTokens(
    @CurrentAdmin() admin: AdminPrincipal,
    @Query() query: ListAdminTokensQuery,
  ): Promise<AdminTokenView[]> {
    const orgId = this.reachableOrg(admin, query.orgId);
    return (await this.tokens.listAdminTokens({ orgId, includeRevoked: query.includeRevoked === 'true' })).map(
      toAdminTokenView,
    );
  }

  @Get(':tokenId')
  @ApiOperation({ summary: 'Get an admin token (never its secret)' })
  @ApiOkResponse({ type: AdminTokenView })
  @ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown token, or another organization’s' })
  async getAdminToken(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('tokenId') tokenId: string,
  ): Promise<AdminTokenView> {
    return toAdminTokenView(await this.tokens.getAdminToken(tokenId, this.reachableOrg(admin)));
  }

  @Patch(':tokenId')
  @ApiOperation({ summary: 'Rename an admin token, set who holds it, or change its expiry (null: never)' })
  @ApiOkResponse({ type: AdminTokenView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  @ApiNotFoundResponse({ type: ErrorBodyView })
  async updateAdminToken(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('tokenId') tokenId: string,
    @Body() dto: UpdateAdminTokenDto,
  ): Promise<AdminTokenView> {
    return this.admins.update(admin, tokenId, this.reachableOrg(admin), dto);
  }

  @Delete(':tokenId')
  @ApiOperation({ summary: 'Revoke an admin token: refused from its next request on' })
  @ApiOkResponse({ type: AdminTokenView })
  @ApiNotFoundResponse({ type: ErrorBodyView })
  async revokeAdminToken(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('tokenId') tokenId: string,
  ): Promise<AdminTokenView> {
    return this.admins.revoke(admin, tokenId, this.reachableOrg(admin));
  }

  /**
   * The org whose tokens the caller manages: any (undefined) or the one asked for a platform admin,
   * its own for an org admin (another org's id is not found, as everywhere); nobody else.
   */
  private reachableOrg(admin: AdminPrincipal, asked?: string): string | undefined {
    if (admin.role === 'PLATFORM_ADMIN') return asked;
    if (admin.role !== 'ORG_ADMIN' || !admin.orgId)
      throw new ForbiddenException(
        `role ${admin.role} may not manage admin tokens; it needs ORG_ADMIN or PLATFORM_ADMIN`,
      );
    if (asked && asked !== admin.orgId)
      throw new IdentityException(IdentityExceptionCode.OrgNotFound, `organization ${asked} not found`, 'orgId');
    return admin.orgId;
  }
}
