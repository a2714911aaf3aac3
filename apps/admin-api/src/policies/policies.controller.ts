import { Body, Controller, Get, Put, Res } from '@nestjs/common';
import type { Response } from 'express';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiPreconditionFailedResponse,
  ApiTags,
} from '@nestjs/swagger';
import { AdminPrincipal, auditBy } from '@tollgate/identity';
import { PolicyAdminService, PolicyScope } from '@tollgate/policy';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { EnumParam } from '../common/request/enum-param.decorator';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { IfMatch, setEtag } from '../common/request/if-match.decorator';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { POLICY_SCOPES, PolicyView, toPolicyView } from './policy.view';
import { PutPolicyDto, toPutPolicyInput } from './put-policy.dto';

@ApiTags('policies')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization, or a scope id not in it' })
@Controller('v1/orgs/:orgId/policies')
export class PoliciesController {
  constructor(private readonly policies: PolicyAdminService) {}

  @Put(':scope/:scopeId')
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({ summary: 'Create or replace the access policy of the org, a team, a user or a key' })
  @ApiParam({ name: 'scope', enum: Object.values(POLICY_SCOPES) })
  @ApiOkResponse({ type: PolicyView })
  @ApiBadRequestResponse({ type: ErrorBodyView, description: 'A bad pattern is named, e.g. field "allow[2]"' })
  @ApiPreconditionFailedResponse({
    type: ErrorBodyView,
    description: 'STALE_WRITE: If-Match names another version than the current one',
  })
  async putPolicy(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @EnumParam('scope', POLICY_SCOPES) scope: PolicyScope,
    @UuidParam('scopeId') scopeId: string,
    @IfMatch() ifMatch: number | undefined,
    @Body() dto: PutPolicyDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<PolicyView> {
    const policy = await this.policies.putPolicy(
      orgId,
      scope,
      scopeId,
      toPutPolicyInput(dto),
      {
        by: auditBy(admin),
        entry: (put) => ({
          orgId,
          action: 'policy.updated',
          targetType: 'policy',
          targetId: put.id,
          details: { scope, scopeId, ...dto, version: put.version },
        }),
      },
      ifMatch,
    );
    setEtag(res, policy.version);
    return toPolicyView(policy);
  }

  @Get()
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: 'List the access policies of an organization' })
  @ApiOkResponse({ type: [PolicyView] })
  async listPolicies(@UuidParam('orgId') orgId: string): Promise<PolicyView[]> {
    return (await this.policies.listPolicies(orgId)).map(toPolicyView);
  }
}
