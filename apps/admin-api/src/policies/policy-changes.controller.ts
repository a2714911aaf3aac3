import { Body, Controller, Get, HttpCode, HttpStatus, Patch, Post, Res } from '@nestjs/common';
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
import { PolicyAdminException, PolicyAdminExceptionCode, PolicyAdminService, PolicyScope } from '@tollgate/policy';
import type { Response } from 'express';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { EnumParam } from '../common/request/enum-param.decorator';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { IfMatch, setEtag } from '../common/request/if-match.decorator';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { PatchPolicyDto, PolicyDryRunDto, PolicyDryRunView } from './patch-policy.dto';
import { PolicyChangeService } from './policy-change.service';
import { POLICY_SCOPES, PolicyView, toPolicyView } from './policy.view';
import { toPutPolicyInput } from './put-policy.dto';

/** Reading one level's policy (with its ETag), patching its lists, and a dry run of a change. */
@ApiTags('policies')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization, or a scope id not in it' })
@Controller('v1/orgs/:orgId/policies')
export class PolicyChangesController {
  constructor(
    private readonly admin: PolicyAdminService,
    private readonly changes: PolicyChangeService,
  ) {}

  @Get(':scope/:scopeId')
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({
    summary:
      'Get the policy of one level (its ETag header is the version to send in If-Match); 404 when the level has none',
  })
  @ApiParam({ name: 'scope', enum: Object.values(POLICY_SCOPES) })
  @ApiOkResponse({ type: PolicyView })
  async getPolicy(
    @UuidParam('orgId') orgId: string,
    @EnumParam('scope', POLICY_SCOPES) scope: PolicyScope,
    @UuidParam('scopeId') scopeId: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<PolicyView> {
    const policy = await this.admin.getPolicy(orgId, scope, scopeId);
    if (!policy)
      throw new PolicyAdminException(
        PolicyAdminExceptionCode.ScopeNotFound,
        `the ${scope.toLowerCase()} has no policy of its own`,
        'scopeId',
      );
    setEtag(res, policy.version);
    return toPolicyView(policy);
  }

  @Patch(':scope/:scopeId')
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Add or remove patterns of any list of one level’s policy (allow, deny, ...); the other lists and settings are kept. Creates the policy if the level has none.',
  })
  @ApiParam({ name: 'scope', enum: Object.values(POLICY_SCOPES) })
  @ApiOkResponse({ type: PolicyView })
  @ApiBadRequestResponse({ type: ErrorBodyView, description: 'A bad pattern is named, e.g. field "deny.add[0]"' })
  @ApiPreconditionFailedResponse({
    type: ErrorBodyView,
    description: 'STALE_WRITE: If-Match names another version than the current one',
  })
  async patchPolicy(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @EnumParam('scope', POLICY_SCOPES) scope: PolicyScope,
    @UuidParam('scopeId') scopeId: string,
    @IfMatch() ifMatch: number | undefined,
    @Body() dto: PatchPolicyDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<PolicyView> {
    const policy = await this.changes.patchPolicy(
      orgId,
      scope,
      scopeId,
      dto,
      {
        by: auditBy(admin),
        entry: (patched) => ({
          orgId,
          action: 'policy.patched',
          targetType: 'policy',
          targetId: patched.id,
          details: { scope, scopeId, ...dto, version: patched.version },
        }),
      },
      ifMatch,
    );
    setEtag(res, policy.version);
    return toPolicyView(policy);
  }

  @Post(':scope/:scopeId/dry-run')
  @HttpCode(HttpStatus.OK)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Dry run of a policy change (a replacement, a patch, or both): which keys would gain or lose which tools. Nothing is written.',
  })
  @ApiParam({ name: 'scope', enum: Object.values(POLICY_SCOPES) })
  @ApiOkResponse({ type: PolicyDryRunView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  async dryRun(
    @UuidParam('orgId') orgId: string,
    @EnumParam('scope', POLICY_SCOPES) scope: PolicyScope,
    @UuidParam('scopeId') scopeId: string,
    @Body() dto: PolicyDryRunDto,
  ): Promise<PolicyDryRunView> {
    const { replace, ...patch } = dto;
    return this.changes.dryRun(orgId, scope, scopeId, replace ? toPutPolicyInput(replace) : undefined, patch);
  }
}
