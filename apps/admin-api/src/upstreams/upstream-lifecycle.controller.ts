import { Body, Controller, Delete, HttpCode, HttpStatus, Patch, Post, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPreconditionFailedResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { UpstreamServer } from '@tollgate/db';
import type { AdminPrincipal } from '@tollgate/identity';
import type { Response } from 'express';
import { AuditService } from '../audit/audit.service';
import { AuditAction, redactUrl } from '@tollgate/audit';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/error-body.view';
import { IfMatch, setEtag } from '../common/if-match.decorator';
import { UuidParam } from '../common/uuid-param.decorator';
import { UpdateUpstreamDto } from './update-upstream.dto';
import { UpstreamAdminService } from './upstream-admin.service';
import { UpstreamView, toUpstreamView } from './upstream.view';

/** Day-2 changes of an upstream: edit, disable and enable, pause and resume sync, delete. */
@ApiTags('upstreams')
@ApiBearerAuth()
@ApiNotFoundResponse({
  type: ErrorBodyView,
  description: 'Unknown organization or upstream (a deleted upstream is unknown)',
})
@ApiPreconditionFailedResponse({
  type: ErrorBodyView,
  description: 'STALE_WRITE: If-Match names another version than the current one',
})
@Controller('v1/orgs/:orgId/upstreams')
export class UpstreamLifecycleController {
  constructor(
    private readonly upstreams: UpstreamAdminService,
    private readonly audit: AuditService,
  ) {}

  @Patch(':upstreamId')
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Edit an upstream: URL, headers and secrets (rotated without downtime: the next call on every edge uses them), auth mode and OAuth client, sync interval, time-out, output cap, review settings',
  })
  @ApiOkResponse({ type: UpstreamView })
  @ApiBadRequestResponse({
    type: ErrorBodyView,
    description: 'A bad field, or a URL the outbound rule refuses (field "url")',
  })
  async updateUpstream(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('upstreamId') upstreamId: string,
    @IfMatch() ifMatch: number | undefined,
    @Body() dto: UpdateUpstreamDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<UpstreamView> {
    const { upstream, changed } = await this.upstreams.updateUpstream(orgId, upstreamId, dto, ifMatch);
    const view = toUpstreamView(upstream);
    await this.audit.record(admin, {
      orgId,
      action: 'upstream.updated',
      targetType: 'upstream',
      targetId: upstream.id,
      // Names of what changed; secret values never reach the audit trail.
      details: {
        changed,
        ...(dto.url !== undefined ? { url: redactUrl(upstream.url) } : {}),
        headerNames: view.headerNames,
        ...(dto.syncIntervalSeconds !== undefined ? { syncIntervalSeconds: dto.syncIntervalSeconds } : {}),
        ...(dto.callTimeoutMs !== undefined ? { callTimeoutMs: dto.callTimeoutMs } : {}),
        ...(dto.outputTokenCap !== undefined ? { outputTokenCap: dto.outputTokenCap } : {}),
        ...(dto.autoApproveTools !== undefined ? { autoApproveTools: dto.autoApproveTools } : {}),
        ...(dto.authMode !== undefined || dto.oauth !== undefined ? { authMode: upstream.authMode } : {}),
        // The client id and scope are not secret; the client secret is only named in `changed`.
        ...(dto.oauth?.clientId !== undefined ? { oauthClientId: dto.oauth.clientId } : {}),
        ...(dto.oauth?.scope !== undefined ? { oauthScope: dto.oauth.scope } : {}),
        version: upstream.version,
      },
    });
    setEtag(res, upstream.version);
    return view;
  }

  @Post(':upstreamId/disable')
  @HttpCode(HttpStatus.OK)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Disable an upstream: its tools vanish from every key at once (sessions hear list_changed), calls to them are refused, no sync runs',
  })
  @ApiOkResponse({ type: UpstreamView })
  async disableUpstream(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('upstreamId') upstreamId: string,
    @IfMatch() ifMatch: number | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<UpstreamView> {
    return this.changed(
      admin,
      res,
      'upstream.disabled',
      await this.upstreams.setEnabled(orgId, upstreamId, false, ifMatch),
    );
  }

  @Post(':upstreamId/enable')
  @HttpCode(HttpStatus.OK)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Enable a disabled upstream again: its approved tools are served and its sync is scheduled (unless paused)',
  })
  @ApiOkResponse({ type: UpstreamView })
  async enableUpstream(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('upstreamId') upstreamId: string,
    @IfMatch() ifMatch: number | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<UpstreamView> {
    return this.changed(
      admin,
      res,
      'upstream.enabled',
      await this.upstreams.setEnabled(orgId, upstreamId, true, ifMatch),
    );
  }

  @Post(':upstreamId/pause-sync')
  @HttpCode(HttpStatus.OK)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Pause the catalog sync: the periodic job scheduler is removed and list_changed syncs skipped; an admin sync still runs',
  })
  @ApiOkResponse({ type: UpstreamView })
  async pauseSync(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('upstreamId') upstreamId: string,
    @IfMatch() ifMatch: number | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<UpstreamView> {
    return this.changed(
      admin,
      res,
      'upstream.sync-paused',
      await this.upstreams.setSyncPaused(orgId, upstreamId, true, ifMatch),
    );
  }

  @Post(':upstreamId/resume-sync')
  @HttpCode(HttpStatus.OK)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({ summary: 'Resume the catalog sync: the job scheduler is created again on the upstream’s interval' })
  @ApiOkResponse({ type: UpstreamView })
  async resumeSync(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('upstreamId') upstreamId: string,
    @IfMatch() ifMatch: number | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<UpstreamView> {
    return this.changed(
      admin,
      res,
      'upstream.sync-resumed',
      await this.upstreams.setSyncPaused(orgId, upstreamId, false, ifMatch),
    );
  }

  @Delete(':upstreamId')
  @HttpCode(HttpStatus.OK)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Delete an upstream: its tools are removed, its secrets and users’ connections dropped; past spend stays in reports under its namespace, which is free again',
  })
  @ApiOkResponse({ type: UpstreamView, description: 'The upstream as deleted (enabled false)' })
  @ApiConflictResponse({ type: ErrorBodyView })
  async deleteUpstream(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('upstreamId') upstreamId: string,
    @IfMatch() ifMatch: number | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<UpstreamView> {
    return this.changed(
      admin,
      res,
      'upstream.deleted',
      await this.upstreams.deleteUpstream(orgId, upstreamId, ifMatch),
    );
  }

  private async changed(
    admin: AdminPrincipal,
    res: Response,
    action: AuditAction,
    upstream: UpstreamServer,
  ): Promise<UpstreamView> {
    await this.audit.record(admin, {
      orgId: upstream.orgId,
      action,
      targetType: 'upstream',
      targetId: upstream.id,
      details: {
        namespace: upstream.namespace,
        enabled: upstream.enabled,
        syncPaused: upstream.syncPaused,
        version: upstream.version,
      },
    });
    setEtag(res, upstream.version);
    return toUpstreamView(upstream);
  }
}
