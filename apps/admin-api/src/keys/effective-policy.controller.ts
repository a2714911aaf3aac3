import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { EffectivePolicyService } from './effective-policy.service';
import { EffectivePolicyView, toEffectivePolicyView } from './effective-policy.view';

@ApiTags('virtual keys')
@ApiBearerAuth()
@ApiNotFoundResponse({
  type: ErrorBodyView,
  description:
    'Unknown organization or key, or a key outside the caller’s reach (another user’s for a member, another team’s for a team admin)',
})
@Controller('v1/orgs/:orgId/keys/:keyId/effective-policy')
export class EffectivePolicyController {
  constructor(private readonly effective: EffectivePolicyService) {}

  @Get()
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({
    summary:
      'What the key may do now: every served tool, whether it can see and call it, the price and rate limits in force, the rule that refuses it, and its budgets’ standing',
  })
  @ApiOkResponse({ type: EffectivePolicyView })
  async effectivePolicy(
    @UuidParam('orgId') orgId: string,
    @UuidParam('keyId') keyId: string,
  ): Promise<EffectivePolicyView> {
    return toEffectivePolicyView(await this.effective.effectivePolicy(orgId, keyId));
  }
}
