import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Put, Res } from '@nestjs/common';
import type { Response } from 'express';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPreconditionFailedResponse,
  ApiTags,
} from '@nestjs/swagger';
import { BudgetAdminService } from '@tollgate/budget';
import { AdminPrincipal, auditBy } from '@tollgate/identity';
import { toMicros } from '@tollgate/kernel';
import { BudgetUtilisationService, budgetVisible } from '@tollgate/reporting';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { IfMatch, setEtag } from '../common/request/if-match.decorator';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { reportScopeOf } from '../reports/report-scope';
import { budgetPutAudit } from './budget-audit';
import { BudgetView, toBudgetView } from './budget.view';
import { PutBudgetDto } from './put-budget.dto';

@ApiTags('budgets')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization, budget, or a scope id not in the org' })
@Controller('v1/orgs/:orgId/budgets')
export class BudgetsController {
  constructor(
    private readonly budgets: BudgetAdminService,
    private readonly utilisation: BudgetUtilisationService,
  ) {}

  @Put()
  @HttpCode(HttpStatus.OK)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary: 'Create or update the budget of a scope and period (upsert on org, scope, scopeId and period)',
  })
  @ApiOkResponse({ type: BudgetView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  @ApiPreconditionFailedResponse({
    type: ErrorBodyView,
    description: 'STALE_WRITE: If-Match names another version than the budget’s current one',
  })
  async putBudget(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @IfMatch() ifMatch: number | undefined,
    @Body() dto: PutBudgetDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<BudgetView> {
    const { budget } = await this.budgets.putBudget(
      orgId,
      { ...dto, limitMicros: toMicros(dto.limitMicros) },
      budgetPutAudit(admin, orgId),
      ifMatch,
    );
    setEtag(res, budget.version);
    return toBudgetView(budget);
  }

  @Get()
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({
    summary:
      'List the budgets of an organization the caller may see: all for org admins and finance; for a team ' +
      'admin its team’s and its team’s keys’; for a member their own and their keys’ (as GET /reports/budgets)',
  })
  @ApiOkResponse({ type: [BudgetView] })
  @ApiForbiddenResponse({ type: ErrorBodyView, description: 'A team admin or member token that names no team or user' })
  async listBudgets(@CurrentAdmin() admin: AdminPrincipal, @UuidParam('orgId') orgId: string): Promise<BudgetView[]> {
    const scope = reportScopeOf(admin);
    const [budgets, visible] = await Promise.all([
      this.budgets.listBudgets(orgId),
      this.utilisation.visibleBudgetScopes(orgId, scope),
    ]);
    return budgets.filter((b) => budgetVisible(visible, b)).map(toBudgetView);
  }

  @Delete(':budgetId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({ summary: 'Delete a budget' })
  @ApiNoContentResponse()
  async deleteBudget(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('budgetId') budgetId: string,
  ): Promise<void> {
    await this.budgets.deleteBudget(orgId, budgetId, {
      by: auditBy(admin),
      entry: (budget) => ({
        orgId,
        action: 'budget.deleted',
        targetType: 'budget',
        targetId: budget.id,
        details: {
          scope: budget.scope,
          scopeId: budget.scopeId,
          period: budget.period,
          limitMicros: budget.limitMicros,
        },
      }),
    });
  }
}
