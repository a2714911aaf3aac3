import { Body, Controller, Get, HttpCode, HttpStatus, Post, Put, Res } from '@nestjs/common';
import type { Response } from 'express';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { AdminPrincipal, auditBy } from '@tollgate/identity';
import { AuditService } from '../audit/audit.service';
import { redactUrl } from '@tollgate/audit';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { setEtag } from '../common/request/if-match.decorator';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { RegisterUpstreamDto } from './register-upstream.dto';
import { PutExposureDto } from './put-exposure.dto';
import { UpstreamAdminService } from './upstream-admin.service';
import { SyncRequestedView, ToolView, UpstreamView, toToolView, toUpstreamView } from './upstream.view';

@ApiTags('upstreams')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization or upstream' })
@Controller('v1/orgs/:orgId/upstreams')
export class UpstreamsController {
  constructor(
    private readonly upstreams: UpstreamAdminService,
    private readonly audit: AuditService,
  ) {}

  @Post()
  @HttpCode(HttpStatus.CREATED)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({ summary: 'Register an upstream MCP server; its first catalog sync is queued at once' })
  @ApiCreatedResponse({ type: UpstreamView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  @ApiForbiddenResponse({
    type: ErrorBodyView,
    description: 'STDIO upstreams need a platform admin unless the deployment allows them',
  })
  @ApiConflictResponse({ type: ErrorBodyView, description: 'The namespace is taken in this organization' })
  async registerUpstream(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @Body() dto: RegisterUpstreamDto,
  ): Promise<UpstreamView> {
    const { upstream } = await this.upstreams.registerUpstream(admin, orgId, dto, {
      by: auditBy(admin),
      entry: ({ upstream, jobId }) => ({
        orgId,
        action: 'upstream.created',
        targetType: 'upstream',
        targetId: upstream.id,
        details: {
          namespace: upstream.namespace,
          transport: upstream.transport,
          command: upstream.command,
          args: upstream.args,
          url: redactUrl(upstream.url),
          headerNames: toUpstreamView(upstream).headerNames,
          authMode: upstream.authMode,
          syncIntervalSeconds: upstream.syncIntervalSeconds,
          callTimeoutMs: upstream.callTimeoutMs,
          outputTokenCap: upstream.outputTokenCap,
          syncJobId: jobId,
        },
      }),
    });
    return toUpstreamView(upstream);
  }

  @Get()
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: 'List the upstreams of an organization' })
  @ApiOkResponse({ type: [UpstreamView] })
  async listUpstreams(@UuidParam('orgId') orgId: string): Promise<UpstreamView[]> {
    return (await this.upstreams.listUpstreams(orgId)).map(toUpstreamView);
  }

  @Get(':upstreamId')
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: 'Get an upstream (its ETag header is the version to send in If-Match)' })
  @ApiOkResponse({ type: UpstreamView })
  async getUpstream(
    @UuidParam('orgId') orgId: string,
    @UuidParam('upstreamId') upstreamId: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<UpstreamView> {
    const upstream = await this.upstreams.getUpstream(orgId, upstreamId);
    setEtag(res, upstream.version);
    return toUpstreamView(upstream);
  }

  @Post(':upstreamId/sync')
  @HttpCode(HttpStatus.ACCEPTED)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({ summary: 'Queue a catalog sync of the upstream now' })
  @ApiAcceptedResponse({ type: SyncRequestedView })
  async requestSync(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('upstreamId') upstreamId: string,
  ): Promise<SyncRequestedView> {
    const { upstream, jobId } = await this.upstreams.requestSync(orgId, upstreamId);
    await this.audit.record(admin, {
      orgId,
      action: 'upstream.sync-requested',
      targetType: 'upstream',
      targetId: upstream.id,
      details: { jobId },
    });
    return { jobId };
  }

  @Put(':upstreamId/exposure')
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Expose the upstream’s tools and prompts under their own names (no `<namespace>__` prefix), or prefixed again',
  })
  @ApiOkResponse({ type: UpstreamView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  @ApiConflictResponse({
    type: ErrorBodyView,
    description: 'A name of this upstream is already exposed by another upstream (NAME_COLLISION, the names listed)',
  })
  async putExposure(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('upstreamId') upstreamId: string,
    @Body() dto: PutExposureDto,
  ): Promise<UpstreamView> {
    const upstream = await this.upstreams.setExposure(orgId, upstreamId, dto.exposeUnprefixed, {
      by: auditBy(admin),
      entry: (written) => ({
        orgId,
        action: 'upstream.exposure-changed',
        targetType: 'upstream',
        targetId: written.id,
        details: { exposeUnprefixed: dto.exposeUnprefixed },
      }),
    });
    return toUpstreamView(upstream);
  }

  @Get(':upstreamId/tools')
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: 'List the tools the catalog holds for the upstream, with review state and token cost' })
  @ApiOkResponse({ type: [ToolView] })
  async listTools(@UuidParam('orgId') orgId: string, @UuidParam('upstreamId') upstreamId: string): Promise<ToolView[]> {
    const { upstream, tools } = await this.upstreams.listTools(orgId, upstreamId);
    return tools.map((t) => toToolView(upstream.namespace, t));
  }
}
