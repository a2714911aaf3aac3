import { Body, Controller, Get, HttpCode, HttpStatus, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { AdminPrincipal, auditBy } from '@tollgate/identity';
import { toMicros } from '@tollgate/kernel';
import { PriceBookService } from '@tollgate/pricing';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { CreatePriceRuleDto } from './create-price-rule.dto';
import { PriceRuleView, toPriceRuleView } from './price-rule.view';

@ApiTags('prices')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization or upstream' })
@Controller('v1/orgs/:orgId/prices')
export class PricesController {
  constructor(private readonly priceBook: PriceBookService) {}

  @Post()
  @HttpCode(HttpStatus.CREATED)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary: 'Add a price rule (rules are append-only: a price change is a new rule with a later effectiveFrom)',
  })
  @ApiCreatedResponse({ type: PriceRuleView })
  @ApiBadRequestResponse({ type: ErrorBodyView, description: 'e.g. a fractional amount, named in "field"' })
  async addPriceRule(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Body() dto: CreatePriceRuleDto,
  ): Promise<PriceRuleView> {
    const rule = await this.priceBook.addPriceRule(
      orgId,
      {
        upstreamId: dto.upstreamId ?? null,
        toolPattern: dto.toolPattern,
        perCallMicros: toMicros(dto.perCallMicros),
        perOutputTokenMicros: dto.perOutputTokenMicros === undefined ? undefined : toMicros(dto.perOutputTokenMicros),
        acceptReportedCost: dto.acceptReportedCost,
        reportedCostCapMicros:
          dto.reportedCostCapMicros === undefined ? undefined : toMicros(dto.reportedCostCapMicros),
        chargeFailedCalls: dto.chargeFailedCalls,
        effectiveFrom: dto.effectiveFrom ? new Date(dto.effectiveFrom) : undefined,
      },
      {
        by: auditBy(admin),
        entry: (added) => ({
          orgId,
          action: 'price-rule.created',
          targetType: 'price-rule',
          targetId: added.id,
          details: { ...toPriceRuleView(added) },
        }),
      },
    );
    return toPriceRuleView(rule);
  }

  @Get()
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: 'List the price book, newest effective date first' })
  @ApiOkResponse({ type: [PriceRuleView] })
  async listPriceRules(@UuidParam('orgId') orgId: string): Promise<PriceRuleView[]> {
    return (await this.priceBook.listPriceRules(orgId)).map(toPriceRuleView);
  }
}
