import { Controller, Delete, Get, HttpCode, HttpStatus, Inject, Post, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { AdminConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { ConnectFlowService, UserConnectionService, oauthCallbackUrl } from '@tollgate/connections';
import { AdminPrincipal, auditBy } from '@tollgate/identity';
import { AuditService } from '../audit/audit.service';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { FieldValidationException } from '../common/errors/field-validation.exception';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { assertMayManageConnectionsOf } from './connection-access';
import { ConnectionView, StartedConnectionView, toConnectionView, toStartedConnectionView } from './connection.view';
import { isUuid } from '@tollgate/kernel';

@ApiTags('connections')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorBodyView, description: 'Unknown organization, user, upstream or connection' })
@ApiForbiddenResponse({ type: ErrorBodyView, description: 'Only org admins manage other users’ connections' })
@Controller('v1/orgs/:orgId')
export class ConnectionsController {
  constructor(
    private readonly connectFlow: ConnectFlowService,
    private readonly connections: UserConnectionService,
    private readonly audit: AuditService,
    @Inject(TOLLGATE_CONFIG) private readonly config: AdminConfig,
  ) {}

  @Post('users/:userId/connections/:upstreamId')
  @HttpCode(HttpStatus.CREATED)
  @OrgAccess(OrgAccessLevel.ManageOwn)
  @ApiOperation({
    summary: 'Start connecting a user’s account at a per-user OAuth upstream',
    description:
      'Answers the upstream’s authorization URL (state and PKCE kept server-side for 10 minutes). The user opens it, signs in, and is sent back to /v1/oauth/callback.',
  })
  @ApiCreatedResponse({ type: StartedConnectionView })
  async startConnection(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('userId') userId: string,
    @UuidParam('upstreamId') upstreamId: string,
  ): Promise<StartedConnectionView> {
    assertMayManageConnectionsOf(admin, userId);
    const started = await this.connectFlow.startConnection(
      orgId,
      userId,
      upstreamId,
      oauthCallbackUrl(this.config.admin.publicUrl),
    );
    await this.audit.record(admin, {
      orgId,
      action: 'connection.started',
      targetType: 'user',
      targetId: userId,
      details: { upstreamId },
    });
    return toStartedConnectionView(started);
  }

  @Get('users/:userId/connections')
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({ summary: 'List a user’s upstream connections and their health (never the tokens)' })
  @ApiOkResponse({ type: [ConnectionView] })
  async listUserConnections(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('userId') userId: string,
  ): Promise<ConnectionView[]> {
    assertMayManageConnectionsOf(admin, userId);
    return (await this.connections.listForUser(orgId, userId)).map(toConnectionView);
  }

  @Delete('users/:userId/connections/:upstreamId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @OrgAccess(OrgAccessLevel.ManageOwn)
  @ApiOperation({
    summary: 'Revoke a user’s connection: Tollgate forgets the tokens; the next call answers AUTH_REQUIRED',
  })
  @ApiNoContentResponse()
  async revokeConnection(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('userId') userId: string,
    @UuidParam('upstreamId') upstreamId: string,
  ): Promise<void> {
    assertMayManageConnectionsOf(admin, userId);
    await this.connections.revoke(orgId, userId, upstreamId, {
      by: auditBy(admin),
      entry: () => ({
        orgId,
        action: 'connection.revoked',
        targetType: 'user',
        targetId: userId,
        details: { upstreamId },
      }),
    });
  }

  @Get('connections')
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({ summary: 'Every user connection of the organization with its health (org admins; never the tokens)' })
  @ApiQuery({ name: 'upstreamId', required: false })
  @ApiOkResponse({ type: [ConnectionView] })
  async listOrgConnections(
    @UuidParam('orgId') orgId: string,
    @Query('upstreamId') upstreamId?: string,
  ): Promise<ConnectionView[]> {
    if (upstreamId !== undefined && !isUuid(upstreamId))
      throw new FieldValidationException('upstreamId', ['upstreamId must be a UUID']);
    return (await this.connections.listForOrg(orgId, upstreamId)).map(toConnectionView);
  }
}
