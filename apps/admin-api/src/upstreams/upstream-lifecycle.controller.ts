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
import { AdminPrincipal, auditBy } from '@tollgate/identity';
import type { Response } from 'express';
import { AuditAction, AuditedBy, AuditEntry, redactUrl } from '@tollgate/audit';
import { UpstreamChange, UpstreamLifecycleService } from '@tollgate/upstream-registry';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { IfMatch, setEtag } from '../common/request/if-match.decorator';
import { UuidParam } from '../common/request/uuid-param.decorator';
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
    private readonly lifecycle: UpstreamLifecycleService,
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
    const { upstream } = await this.upstreams.updateUpstream(
      orgId,
      upstreamId,
      dto,
      { by: auditBy(admin), entry: (change) => upstreamUpdatedEntry(orgId, dto, change) },
      ifMatch,
    );
    setEtag(res, upstream.version);
    return toUpstreamView(upstream);
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
      res,
      await this.lifecycle.setEnabled(orgId, upstreamId, false, lifecycleAudit(admin, 'upstream.disabled'), ifMatch),
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
      res,
      await this.lifecycle.setEnabled(orgId, upstreamId, true, lifecycleAudit(admin, 'upstream.enabled'), ifMatch),
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
      res,
      await this.lifecycle.setSyncPaused(
        orgId,
        upstreamId,
        true,
        lifecycleAudit(admin, 'upstream.sync-paused'),
        ifMatch,
      ),
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
      res,
      await this.lifecycle.setSyncPaused(
        orgId,
        upstreamId,
        false,
        lifecycleAudit(admin, 'upstream.sync-resumed'),
        ifMatch,
      ),
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
      res,
      await this.lifecycle.deleteUpstream(orgId, upstreamId, lifecycleAudit(admin, 'upstream.deleted'), ifMatch),
    );
  }

  private changed(res: Response, upstream: UpstreamServer): UpstreamView {
    setEtag(res, upstream.version);
    return toUpstreamView(upstream);
  }
}

/** The audit of an upstream's lifecycle step: its state after it. */
function lifecycleAudit(admin: AdminPrincipal, action: AuditAction): AuditedBy<UpstreamServer> {
  return {
    by: auditBy(admin),
    entry: (upstream) => ({
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
    }),
  };
}

/** Names of what changed; secret values never reach the audit trail. */
function upstreamUpdatedEntry(
  orgId: string,
  dto: UpdateUpstreamDto,
  { upstream, changed }: UpstreamChange,
): AuditEntry {
  const view = toUpstreamView(upstream);
  return {
    orgId,
    action: 'upstream.updated',
    targetType: 'upstream',
    targetId: upstream.id,
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
  };
}
