import {
  Controller,
  Delete,
  ForbiddenException,
  Get,
  HttpCode,
  HttpStatus,
  NotFoundException,
  Param,
  Put,
  Res,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProperty,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { AdminPrincipal, auditBy, EmailDomainService, IdentityService } from '@tollgate/identity';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';

export class EmailDomainView {
  @ApiProperty({ example: 'acme.com', description: 'Lower case; every address @ this domain belongs to the org' })
  domain!: string;
  @ApiProperty() createdAt!: Date;
}

export class EmailDomainClaimedView extends EmailDomainView {
  @ApiProperty({
    example: 0,
    description:
      'Users of other organizations whose email is in this domain: they can no longer sign in through their org\u2019s identity provider',
  })
  usersInOtherOrgs!: number;
}

/**
 * Email domains an organisation claims. Only a platform admin sets them (an org admin could
 * otherwise claim someone else's domain); anyone of the org may read them.
 */
@ApiTags('organizations')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization (or claim, on DELETE)' })
@Controller('v1/orgs/:orgId/email-domains')
export class EmailDomainsController {
  constructor(
    private readonly domains: EmailDomainService,
    private readonly identity: IdentityService,
  ) {}

  @Get()
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: "The organization's claimed email domains" })
  @ApiOkResponse({ type: [EmailDomainView] })
  async list(@UuidParam('orgId') orgId: string): Promise<EmailDomainView[]> {
    await this.identity.getOrganization(orgId);
    return (await this.domains.list(orgId)).map(({ domain, createdAt }) => ({ domain, createdAt }));
  }

  @Put(':domain')
  @ApiOperation({
    summary:
      'Claim an email domain for the organization (platform admins only): no other org may create a user there or sign one in through its identity provider',
  })
  @ApiParam({ name: 'domain', example: 'acme.com' })
  @ApiOkResponse({ type: EmailDomainClaimedView, description: 'Claimed (201 when new, 200 when it already was)' })
  @ApiBadRequestResponse({ type: ErrorBodyView, description: 'INVALID_EMAIL_DOMAIN: `domain` is not a domain name' })
  @ApiConflictResponse({ type: ErrorBodyView, description: 'EMAIL_DOMAIN_CLAIMED: another organization holds it' })
  @ApiForbiddenResponse({ type: ErrorBodyView, description: 'Not a platform admin' })
  async claim(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Param('domain') domain: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<EmailDomainClaimedView> {
    requirePlatformAdmin(admin);
    await this.identity.getOrganization(orgId);
    const { claim, created, usersInOtherOrgs } = await this.domains.claim(orgId, domain, {
      by: auditBy(admin),
      entry: (claimed) => ({
        orgId,
        action: 'org.email-domain-claimed',
        targetType: 'organization',
        targetId: orgId,
        details: claimed,
      }),
    });
    res.status(created ? HttpStatus.CREATED : HttpStatus.OK);
    return { domain: claim.domain, createdAt: claim.createdAt, usersInOtherOrgs };
  }

  @Delete(':domain')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Release a claimed email domain (platform admins only)' })
  @ApiParam({ name: 'domain', example: 'acme.com' })
  @ApiNoContentResponse()
  @ApiBadRequestResponse({ type: ErrorBodyView, description: 'INVALID_EMAIL_DOMAIN: `domain` is not a domain name' })
  @ApiForbiddenResponse({ type: ErrorBodyView, description: 'Not a platform admin' })
  async release(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Param('domain') domain: string,
  ): Promise<void> {
    requirePlatformAdmin(admin);
    await this.identity.getOrganization(orgId);
    const released = await this.domains.release(orgId, domain, {
      by: auditBy(admin),
      entry: () => ({
        orgId,
        action: 'org.email-domain-released',
        targetType: 'organization',
        targetId: orgId,
        details: { domain: domain.trim().toLowerCase() },
      }),
    });
    if (!released) throw new NotFoundException(`organization ${orgId} does not claim ${domain.slice(0, 100)}`);
  }
}

function requirePlatformAdmin(admin: AdminPrincipal): void {
  if (admin.role !== 'PLATFORM_ADMIN')
    throw new ForbiddenException(
      `only a platform admin may claim or release email domains; role ${admin.role} may not`,
    );
}
