import { Controller, Get, HttpException, Query, Req, Res } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import type { Request, Response } from 'express';
import { ApiBadRequestResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { CatalogScheduleService } from '@tollgate/upstream-registry';
import { ConnectFlowService, OAUTH_CALLBACK_PATH } from '@tollgate/connections';
import { selfActor } from '@tollgate/identity';
import { Public } from '../auth/public.decorator';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { FieldValidationException } from '../common/errors/field-validation.exception';
import { ConnectedView } from './connection.view';
import { connectionResultPage } from './oauth-callback-page';

/**
 * Where upstream authorization servers send users back. Public (the browser carries no admin
 * token): the single-use state, bound to one user and upstream, is the credential.
 */
@ApiTags('connections')
@Controller()
export class OAuthCallbackController {
  constructor(
    private readonly connectFlow: ConnectFlowService,
    private readonly schedule: CatalogScheduleService,
    private readonly prisma: PrismaService,
  ) {}

  @Get(OAUTH_CALLBACK_PATH.slice(1))
  @Public()
  @ApiOperation({
    summary: 'OAuth redirect URI for per-user upstream connections (no admin token; validated by state)',
  })
  @ApiQuery({ name: 'state', required: true })
  @ApiQuery({ name: 'code', required: false })
  @ApiQuery({ name: 'error', required: false })
  @ApiOkResponse({ type: ConnectedView })
  @ApiBadRequestResponse({
    type: ErrorBodyView,
    description: 'Unknown, used or expired state; access denied; code refused',
  })
  async callback(
    @Req() req: Request,
    @Res() res: Response,
    @Query('state') state?: string,
    @Query('code') code?: string,
    @Query('error') error?: string,
  ): Promise<void> {
    // A person's browser gets a page that says what happened; an API client keeps the JSON.
    if (req.accepts(['json', 'html']) !== 'html') {
      res.json(await this.complete(state, code, error));
      return;
    }
    res
      .type('html')
      .setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'");
    try {
      const done = await this.complete(state, code, error);
      const upstream = await this.prisma.upstreamServer.findUnique({
        where: { id: done.upstreamId },
        select: { namespace: true, displayName: true },
      });
      res.send(
        connectionResultPage({ ok: true, upstream: upstream?.displayName ?? upstream?.namespace ?? 'the upstream' }),
      );
    } catch (err) {
      if (!(err instanceof HttpException)) throw err;
      const body = err.getResponse() as { message?: unknown } | string;
      const reason = typeof body === 'string' ? body : typeof body.message === 'string' ? body.message : err.message;
      res.status(err.getStatus()).send(connectionResultPage({ ok: false, reason }));
    }
  }

  private async complete(state?: string, code?: string, error?: string): Promise<ConnectedView> {
    if (typeof state !== 'string' || state.length === 0 || state.length > 200)
      throw new FieldValidationException('state', ['state is required']);
    const done = await this.connectFlow.completeConnection(
      state,
      typeof code === 'string' ? code : undefined,
      typeof error === 'string' ? error : undefined,
      ({ orgId, userId }) => ({
        by: selfActor('oauth-callback', { orgId, teamId: null, userId }),
        entry: (connected) => ({
          orgId,
          action: 'connection.connected',
          targetType: 'user',
          targetId: userId,
          details: { upstreamId: connected.upstreamId, connectionId: connected.connectionId },
        }),
      }),
    );
    // The catalog of a per-user upstream can only be listed with some user's token: sync now that one exists.
    const syncJobId = await this.schedule.requestSync(done.orgId, done.upstreamId, 'user-connected');
    return { status: 'connected', upstreamId: done.upstreamId, syncJobId };
  }
}
