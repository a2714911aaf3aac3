import { Body, Controller, Get, Put } from '@nestjs/common';
import { ApiBadRequestResponse, ApiBearerAuth, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AdminPrincipal } from '@tollgate/identity';
import { PolicyAdminService, PolicyScope } from '@tollgate/policy';
import { AuditService } from '../audit/audit.service';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { EnumParam } from '../common/enum-param.decorator';
import { ErrorBodyView } from '../common/error-body.view';
import { UuidParam } from '../common/uuid-param.decorator';
import { POLICY_SCOPES, PolicyView, toPolicyView } from './policy.view';
import { PutPolicyDto } from './put-policy.dto';

@ApiTags('policies')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization, or a scope id not in it' })
@Controller('v1/orgs/:orgId/policies')
export class PoliciesController {
  constructor(
    private readonly policies: PolicyAdminService,
    private readonly audit: AuditService,
  ) {}

  @Put(':scope/:scopeId')
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({ summary: 'Create or replace the access policy of the org, a team, a user or a key' })
  @ApiParam({ name: 'scope', enum: Object.values(POLICY_SCOPES) })
  @ApiOkResponse({ type: PolicyView })
  @ApiBadRequestResponse({ type: ErrorBodyView, description: 'A bad pattern is named, e.g. field "allow[2]"' })
  async putPolicy(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @EnumParam('scope', POLICY_SCOPES) scope: PolicyScope,
    @UuidParam('scopeId') scopeId: string,
    @Body() dto: PutPolicyDto,
  ): Promise<PolicyView> {
    const policy = await this.policies.putPolicy(orgId, scope, scopeId, {
      ...dto,
      autoExecute: dto.autoExecute ?? undefined,
      resourceAllow: dto.resourceAllow ?? undefined,
      resourceDeny: dto.resourceDeny ?? undefined,
      promptAllow: dto.promptAllow ?? undefined,
      promptDeny: dto.promptDeny ?? undefined,
    });
    await this.audit.record(admin, {
      orgId,
      action: 'policy.updated',
      targetType: 'policy',
      targetId: policy.id,
      details: { scope, scopeId, ...dto },
    });
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
