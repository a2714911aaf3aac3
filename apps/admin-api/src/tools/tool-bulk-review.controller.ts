import { Body, Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CatalogException, CatalogExceptionCode, ToolReviewService } from '@tollgate/upstream-registry';
import type { AdminPrincipal } from '@tollgate/identity';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { BulkReviewDto, BulkReviewView, ToolDecisionResultView } from './bulk-review.dto';
import { toolDecisionAudit } from './tool-decision-audit';

@ApiTags('tools')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization' })
@Controller('v1/orgs/:orgId/tools')
export class ToolBulkReviewController {
  constructor(private readonly review: ToolReviewService) {}

  @Post('review')
  @HttpCode(HttpStatus.OK)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Approve or reject many pending tools at once; each decision carries the hash its reviewer saw and applies on its own (per-item results: APPLIED, STALE, NOT_FOUND)',
  })
  @ApiOkResponse({ type: BulkReviewView })
  @ApiBadRequestResponse({ type: ErrorBodyView, description: 'e.g. field "decisions.2.definitionHash"' })
  async reviewMany(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Body() dto: BulkReviewDto,
  ): Promise<BulkReviewView> {
    const results: ToolDecisionResultView[] = [];
    for (const item of dto.decisions) {
      try {
        const decision =
          item.decision === 'APPROVE'
            ? await this.review.approve(
                orgId,
                item.toolId,
                item.definitionHash,
                toolDecisionAudit(admin, orgId, 'tool.approved', dto.reason, true),
              )
            : await this.review.reject(
                orgId,
                item.toolId,
                item.definitionHash,
                toolDecisionAudit(admin, orgId, 'tool.rejected', dto.reason, true),
              );
        const { tool } = decision;
        results.push({
          toolId: item.toolId,
          decision: item.decision,
          result: 'APPLIED',
          definitionHash: tool.definitionHash,
          pinnedHash: tool.pinnedHash,
          message: null,
        });
      } catch (err) {
        if (!(err instanceof CatalogException)) throw err;
        if (err.code === CatalogExceptionCode.DefinitionChanged) {
          const tool = await this.review.getTool(orgId, item.toolId);
          results.push({
            toolId: item.toolId,
            decision: item.decision,
            result: 'STALE',
            definitionHash: tool.definitionHash,
            pinnedHash: tool.pinnedHash,
            message: err.message,
          });
        } else if (err.code === CatalogExceptionCode.ToolNotFound) {
          results.push({
            toolId: item.toolId,
            decision: item.decision,
            result: 'NOT_FOUND',
            definitionHash: null,
            pinnedHash: null,
            message: err.message,
          });
        } else throw err;
      }
    }
    const count = (r: ToolDecisionResultView['result']) => results.filter((x) => x.result === r).length;
    return { applied: count('APPLIED'), stale: count('STALE'), notFound: count('NOT_FOUND'), results };
  }
}
