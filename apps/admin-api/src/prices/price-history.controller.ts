import { Body, Controller, Get, HttpCode, HttpStatus, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { AdminPrincipal, auditBy } from '@tollgate/identity';
import { PriceBookService } from '@tollgate/pricing';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { EndPriceRuleDto, PriceHistoryQuery } from './end-price-rule.dto';
import { PriceRuleHistoryView, PriceRuleView, toPriceHistory, toPriceRuleView } from './price-rule.view';

/** Ending a price rule from a date, and the book's history; the past is never edited. */
@ApiTags('prices')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization or price rule' })
@Controller('v1/orgs/:orgId/prices')
export class PriceHistoryController {
  constructor(private readonly priceBook: PriceBookService) {}

  @Get('history')
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({
    summary:
      'The price book’s history: every rule, ended and superseded ones included, oldest first, each with its state now',
  })
  @ApiOkResponse({ type: [PriceRuleHistoryView] })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  async priceHistory(
    @UuidParam('orgId') orgId: string,
    @Query() query: PriceHistoryQuery,
  ): Promise<PriceRuleHistoryView[]> {
    return toPriceHistory(await this.priceBook.priceHistory(orgId, query), new Date());
  }

  @Post(':ruleId/end')
  @HttpCode(HttpStatus.OK)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'End a price rule from a date (default now, never in the past): later calls take the next rule in line, or are free',
  })
  @ApiOkResponse({ type: PriceRuleView })
  @ApiBadRequestResponse({
    type: ErrorBodyView,
    description: 'effectiveUntil in the past, before effectiveFrom, or the rule already ended',
  })
  async endPriceRule(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('ruleId') ruleId: string,
    @Body() dto: EndPriceRuleDto,
  ): Promise<PriceRuleView> {
    const { rule } = await this.priceBook.endPriceRule(
      orgId,
      ruleId,
      dto.effectiveUntil ? new Date(dto.effectiveUntil) : undefined,
      {
        by: auditBy(admin),
        entry: (ended) => ({
          orgId,
          action: 'price-rule.ended',
          targetType: 'price-rule',
          targetId: ended.rule.id,
          details: { effectiveUntil: ended.rule.effectiveUntil, previousUntil: ended.previousUntil },
        }),
      },
    );
    return toPriceRuleView(rule);
  }
}
