import { Body, Controller, Get, HttpCode, HttpStatus, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { TierScoreJobs, ToolReviewService } from '@tollgate/upstream-registry';
import type { AdminPrincipal } from '@tollgate/identity';
import { AuditService } from '../audit/audit.service';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { ListToolsQuery } from './list-tools.query';
import { ApproveToolDto, RejectToolDto } from './review-tool.dto';
import {
  CatalogToolView,
  TierScoresRequestedView,
  ToolDiffView,
  toCatalogToolView,
  toToolDiffView,
} from './tool-review.view';
import { toolDecisionAudit } from './tool-decision-audit';

@ApiTags('tools')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization or tool' })
@Controller('v1/orgs/:orgId/tools')
export class ToolsController {
  constructor(
    private readonly review: ToolReviewService,
    private readonly tierScores: TierScoreJobs,
    private readonly audit: AuditService,
  ) {}

  @Get()
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({
    summary: 'List the organization’s catalog tools, e.g. those waiting for review (reviewStatus=PENDING)',
  })
  @ApiOkResponse({ type: [CatalogToolView] })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  async listTools(@UuidParam('orgId') orgId: string, @Query() query: ListToolsQuery): Promise<CatalogToolView[]> {
    return (await this.review.listTools(orgId, query)).map(toCatalogToolView);
  }

  @Post('tier-scores')
  @HttpCode(HttpStatus.ACCEPTED)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({ summary: 'Queue a recomputation of the organization’s tier scores from the usage rollups now' })
  @ApiAcceptedResponse({ type: TierScoresRequestedView })
  async requestTierScores(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
  ): Promise<TierScoresRequestedView> {
    const jobId = await this.tierScores.requestTierScores(orgId);
    await this.audit.record(admin, {
      orgId,
      action: 'tools.tier-scores-requested',
      targetType: 'organization',
      targetId: orgId,
      details: { jobId },
    });
    return { jobId };
  }

  @Get(':toolId')
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: 'Get a catalog tool' })
  @ApiOkResponse({ type: CatalogToolView })
  async getTool(@UuidParam('orgId') orgId: string, @UuidParam('toolId') toolId: string): Promise<CatalogToolView> {
    return toCatalogToolView(await this.review.getTool(orgId, toolId));
  }

  @Get(':toolId/diff')
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({
    summary: 'What changed between the pinned definition the edge serves and the one the upstream lists now',
  })
  @ApiOkResponse({ type: ToolDiffView })
  async diffTool(@UuidParam('orgId') orgId: string, @UuidParam('toolId') toolId: string): Promise<ToolDiffView> {
    return toToolDiffView(await this.review.diff(orgId, toolId));
  }

  @Post(':toolId/approve')
  @HttpCode(HttpStatus.OK)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Pin the latest definition (the edge serves it at once); 409 if it changed since the reviewer saw definitionHash',
  })
  @ApiOkResponse({ type: CatalogToolView })
  @ApiConflictResponse({ type: ErrorBodyView, description: 'DEFINITION_CHANGED: look at the diff again' })
  async approveTool(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('toolId') toolId: string,
    @Body() dto: ApproveToolDto,
  ): Promise<CatalogToolView> {
    const decision = await this.review.approve(
      orgId,
      toolId,
      dto.definitionHash,
      toolDecisionAudit(admin, orgId, 'tool.approved', dto.reason),
    );
    return toCatalogToolView(decision.tool);
  }

  @Post(':toolId/reject')
  @HttpCode(HttpStatus.OK)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Reject the latest definition: the edge keeps serving the pinned one, or keeps a never-approved tool hidden',
  })
  @ApiOkResponse({ type: CatalogToolView })
  @ApiConflictResponse({ type: ErrorBodyView, description: 'DEFINITION_CHANGED: look at the diff again' })
  async rejectTool(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('toolId') toolId: string,
    @Body() dto: RejectToolDto,
  ): Promise<CatalogToolView> {
    const decision = await this.review.reject(
      orgId,
      toolId,
      dto.definitionHash,
      toolDecisionAudit(admin, orgId, 'tool.rejected', dto.reason),
    );
    return toCatalogToolView(decision.tool);
  }
}
