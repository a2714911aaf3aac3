import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Inject, NotFoundException, Put } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiTags,
} from '@nestjs/swagger';
import { AdminConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { AdminPrincipal, auditBy, IdentityException, IdentityService } from '@tollgate/identity';
import { OrgIdentityProviderService, OrgIdentityProviderView } from '@tollgate/sso';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { checkOutboundUrl, OutboundException } from '@tollgate/outbound';
import { FieldValidationException } from '../common/errors/field-validation.exception';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { SSO_CALLBACK_PATH } from '../oauth/oauth-interaction.handler';
import { SESSION_SSO_CALLBACK_PATH } from './sso.controller';
import { PutIdentityProviderDto } from './put-identity-provider.dto';

export class IdentityProviderView {
  @ApiProperty() issuer!: string;
  @ApiProperty() clientId!: string;
  @ApiProperty() emailClaim!: string;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'The redirect URI to register at the identity provider (null until ADMIN_PUBLIC_URL is set)',
  })
  redirectUri!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'The redirect URI for signing in to the admin API and the console (register it too)',
  })
  sessionRedirectUri!: string | null;
  @ApiProperty({ description: 'People the provider vouches for are created on first sign-in' }) createUsers!: boolean;
  @ApiProperty({ nullable: true, type: String, format: 'uuid', description: 'The team such people join as members' })
  newUserTeamId!: string | null;
  @ApiProperty() createdAt!: Date;
  @ApiProperty() updatedAt!: Date;
}

/** An organisation's OIDC identity provider, where its people sign in to authorise MCP clients. */
@ApiTags('oauth')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization, or no identity provider set' })
@Controller('v1/orgs/:orgId/identity-provider')
export class IdentityProviderController {
  constructor(
    private readonly identity: IdentityService,
    private readonly providers: OrgIdentityProviderService,
    @Inject(TOLLGATE_CONFIG) private readonly config: AdminConfig,
  ) {}

  @Get()
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: "The organisation's identity provider (never its client secret)" })
  @ApiOkResponse({ type: IdentityProviderView })
  async get(@UuidParam('orgId') orgId: string): Promise<IdentityProviderView> {
    await this.identity.getOrganization(orgId);
    const found = await this.providers.get(orgId);
    if (!found) throw new NotFoundException('no identity provider is set for this organization');
    return this.view(found);
  }

  @Put()
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({ summary: 'Set the organisation’s OIDC identity provider (users are matched by verified email)' })
  @ApiOkResponse({ type: IdentityProviderView })
  async put(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Body() dto: PutIdentityProviderDto,
  ): Promise<IdentityProviderView> {
    await this.identity.getOrganization(orgId);
    if (dto.clientSecret === undefined && !(await this.providers.get(orgId)))
      throw new FieldValidationException('clientSecret', [
        'clientSecret is required when no identity provider is set yet',
      ]);
    if (dto.createUsers && !dto.newUserTeamId)
      throw new FieldValidationException('newUserTeamId', ['newUserTeamId is required when createUsers is true']);
    if (dto.newUserTeamId && !(await this.identity.getTeam(orgId, dto.newUserTeamId).catch(notFoundAsNull))) {
      throw new FieldValidationException('newUserTeamId', [
        `team ${dto.newUserTeamId} is not a team of this organization`,
      ]);
    }
    // The outbound rule at saving, as for upstreams and webhooks (it used to bite only at sign-in).
    try {
      await checkOutboundUrl(dto.issuer);
    } catch (err) {
      if (err instanceof OutboundException)
        throw new FieldValidationException('issuer', [`issuer refused: ${err.message}`]);
      throw err;
    }
    const saved = await this.providers.put(orgId, dto, {
      by: auditBy(admin),
      entry: (set) => ({
        orgId,
        action: 'identity-provider.set',
        targetType: 'organization',
        targetId: orgId,
        details: {
          issuer: set.issuer,
          clientId: set.clientId,
          emailClaim: set.emailClaim,
          createUsers: set.createUsers,
          newUserTeamId: set.newUserTeamId,
          secretChanged: dto.clientSecret !== undefined,
        },
      }),
    });
    return this.view(saved);
  }

  @Delete()
  @HttpCode(HttpStatus.NO_CONTENT)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({ summary: 'Remove the organisation’s identity provider' })
  @ApiNoContentResponse()
  async remove(@CurrentAdmin() admin: AdminPrincipal, @UuidParam('orgId') orgId: string): Promise<void> {
    await this.identity.getOrganization(orgId);
    const removed = await this.providers.remove(orgId, {
      by: auditBy(admin),
      entry: () => ({
        orgId,
        action: 'identity-provider.removed',
        targetType: 'organization',
        targetId: orgId,
        details: {},
      }),
    });
    if (!removed) throw new NotFoundException('no identity provider is set for this organization');
  }

  private view(p: OrgIdentityProviderView): IdentityProviderView {
    const issuer = this.config.oauth.issuer;
    return {
      issuer: p.issuer,
      clientId: p.clientId,
      emailClaim: p.emailClaim,
      redirectUri: issuer ? `${issuer}${SSO_CALLBACK_PATH}` : null,
      sessionRedirectUri: issuer ? `${issuer}${SESSION_SSO_CALLBACK_PATH}` : null,
      createUsers: p.createUsers,
      newUserTeamId: p.newUserTeamId,
      createdAt: p.createdAt,
      updatedAt: p.updatedAt,
    };
  }
}

/** A missing team reads as null; a database failure stays what it is. */
function notFoundAsNull(err: unknown): null {
  if (err instanceof IdentityException) return null;
  throw err;
}
