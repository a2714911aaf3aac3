import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPropertyOptional,
  ApiTags,
} from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { AdminPrincipal, auditBy } from '@tollgate/identity';
import { AlertWebhookService, BudgetAlertService, MAX_ALERTS_PAGE } from '@tollgate/reporting';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';
import {
  AlertWebhookView,
  BudgetAlertView,
  IssuedAlertWebhookView,
  toAlertWebhookView,
  toBudgetAlertView,
} from './alert.view';
import { CreateAlertWebhookDto } from './create-alert-webhook.dto';

export class ListAlertsQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_ALERTS_PAGE, default: 100 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(MAX_ALERTS_PAGE)
  limit?: number;
}

@ApiTags('alerts')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization or webhook' })
@Controller('v1/orgs/:orgId')
export class AlertsController {
  constructor(
    private readonly webhooks: AlertWebhookService,
    private readonly alerts: BudgetAlertService,
  ) {}

  @Post('alert-webhooks')
  @HttpCode(HttpStatus.CREATED)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({ summary: 'Add a webhook for budget alerts; the signing secret is in this answer only' })
  @ApiCreatedResponse({ type: IssuedAlertWebhookView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  async createWebhook(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Body() dto: CreateAlertWebhookDto,
  ): Promise<IssuedAlertWebhookView> {
    const { webhook, secret } = await this.webhooks.createWebhook(orgId, dto, {
      by: auditBy(admin),
      entry: (created) => ({
        orgId,
        action: 'alert-webhook.created',
        targetType: 'alert-webhook',
        targetId: created.id,
        details: { url: created.url, description: created.description },
      }),
    });
    return { webhook: toAlertWebhookView(webhook), secret };
  }

  @Get('alert-webhooks')
  @OrgAccess(OrgAccessLevel.Audit)
  @ApiOperation({ summary: 'List the alert webhooks (never their secrets)' })
  @ApiOkResponse({ type: [AlertWebhookView] })
  async listWebhooks(@UuidParam('orgId') orgId: string): Promise<AlertWebhookView[]> {
    return (await this.webhooks.listWebhooks(orgId)).map(toAlertWebhookView);
  }

  @Delete('alert-webhooks/:webhookId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({ summary: 'Delete an alert webhook' })
  @ApiNoContentResponse()
  async deleteWebhook(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('webhookId') webhookId: string,
  ): Promise<void> {
    await this.webhooks.deleteWebhook(orgId, webhookId, {
      by: auditBy(admin),
      entry: (hook) => ({
        orgId,
        action: 'alert-webhook.deleted',
        targetType: 'alert-webhook',
        targetId: hook.id,
        details: { url: hook.url },
      }),
    });
  }

  @Get('alerts')
  @OrgAccess(OrgAccessLevel.Audit)
  @ApiOperation({ summary: 'Budget alert history, latest first, with delivery state' })
  @ApiOkResponse({ type: [BudgetAlertView] })
  async listAlerts(@UuidParam('orgId') orgId: string, @Query() query: ListAlertsQuery): Promise<BudgetAlertView[]> {
    return (await this.alerts.listAlerts(orgId, query.limit ?? 100)).map(toBudgetAlertView);
  }
}
