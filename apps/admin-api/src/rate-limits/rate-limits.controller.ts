import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { AdminPrincipal, auditBy } from '@tollgate/identity';
import { RateLimitAdminService } from '@tollgate/rate-limit';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { CreateRateLimitDto } from './create-rate-limit.dto';
import { rateLimitCreatedAudit } from './rate-limit-audit';
import { RateLimitView, toRateLimitView } from './rate-limit.view';

@ApiTags('rate-limits')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView })
@Controller('v1/orgs/:orgId/rate-limits')
export class RateLimitsController {
  constructor(private readonly rateLimits: RateLimitAdminService) {}

  @Post()
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary: 'Add a rate limit (calls per sliding window and/or concurrent calls) for a level and tool pattern',
  })
  @ApiCreatedResponse({ type: RateLimitView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  async createRateLimit(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Body() dto: CreateRateLimitDto,
  ): Promise<RateLimitView> {
    return toRateLimitView(await this.rateLimits.createRateLimit(orgId, dto, rateLimitCreatedAudit(admin, orgId)));
  }

  @Get()
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: 'List the rate limits of an organization' })
  @ApiOkResponse({ type: [RateLimitView] })
  async listRateLimits(@UuidParam('orgId') orgId: string): Promise<RateLimitView[]> {
    return (await this.rateLimits.listRateLimits(orgId)).map(toRateLimitView);
  }

  @Delete(':rateLimitId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({ summary: 'Delete a rate limit' })
  @ApiNoContentResponse()
  async deleteRateLimit(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('rateLimitId') id: string,
  ): Promise<void> {
    await this.rateLimits.deleteRateLimit(orgId, id, {
      by: auditBy(admin),
      entry: (rule) => ({
        orgId,
        action: 'rate-limit.deleted',
        targetType: 'rate-limit',
        targetId: rule.id,
        details: { ...toRateLimitView(rule) },
      }),
    });
  }
}
