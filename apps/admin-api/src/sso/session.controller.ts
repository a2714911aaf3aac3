import {
  Body,
  Controller,
  Get,
  HttpCode,
  HttpStatus,
  Inject,
  Post,
  Req,
  Res,
  UnauthorizedException,
} from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCookieAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { AdminConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { constantTimeEqual } from '@tollgate/identity';
import { AdminSession, AdminSessionService } from '../auth/admin-session.service';
import type { SessionRequest } from '../auth/admin-auth.guard';
import { Public } from '../auth/public.decorator';
import { readCookie, secureCookies, sessionCookieName, setCookie } from '../auth/session-cookie';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { CreateSessionDto } from './create-session.dto';
import { SessionView } from './session.view';

/** Who is signed in, a platform admin's session from the bootstrap token, and signing out. */
@ApiTags('auth')
@ApiBearerAuth()
@ApiCookieAuth()
@Controller('v1/auth')
export class SessionController {
  private readonly secure: boolean;
  private readonly cookieName: string;

  constructor(
    private readonly sessions: AdminSessionService,
    @Inject(TOLLGATE_CONFIG) private readonly config: AdminConfig,
  ) {
    this.secure = secureCookies(config.admin.publicUrl);
    this.cookieName = sessionCookieName(this.secure);
  }

  @Get('session')
  @ApiOperation({
    summary:
      'Who am I: the person, organisation and roles of the session (or bearer token), and the CSRF token for changes',
  })
  @ApiOkResponse({ type: SessionView })
  @ApiUnauthorizedResponse({ type: ErrorBodyView })
  current(@Req() req: SessionRequest): SessionView {
    if (req.adminSession) return viewOf(req.adminSession);
    const p = req.user!;
    const user = p.actor?.user ?? null;
    return {
      user,
      orgId: p.orgId,
      roles: [p.role],
      role: p.role,
      teamId: p.teamId,
      platformAdmin: p.role === 'PLATFORM_ADMIN',
      via: 'bearer',
      csrfToken: null,
      expiresAt: null,
    };
  }

  @Post('session')
  @Public()
  @ApiOperation({ summary: 'Open a platform admin session (cookie) with the bootstrap token, for the console' })
  @ApiCreatedResponse({ type: SessionView })
  @ApiUnauthorizedResponse({ type: ErrorBodyView })
  async create(@Body() dto: CreateSessionDto, @Res({ passthrough: true }) res: Response): Promise<SessionView> {
    const bootstrap = this.config.admin.bootstrapToken;
    if (!bootstrap || !constantTimeEqual(dto.token, bootstrap))
      throw new UnauthorizedException('token: not the bootstrap token (other admin tokens are used as bearer tokens)');
    const opened = await this.sessions.open({ origin: 'bootstrap-token', bootstrapToken: bootstrap });
    const session = await this.sessions.resolve(opened.id);
    if (!session) throw new UnauthorizedException('the session could not be opened');
    setCookie(res, this.cookieName, opened.id, {
      secure: this.secure,
      path: '/',
      maxAgeSeconds: this.sessions.maxAgeSeconds,
      sameSite: 'Lax',
    });
    return viewOf(session);
  }

  @Post('logout')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    summary:
      'End the session on every replica and clear its cookie (needs X-CSRF-Token); a bearer caller has none to end',
  })
  @ApiNoContentResponse()
  async logout(@Req() req: SessionRequest, @Res({ passthrough: true }) res: Response): Promise<void> {
    const id = req.adminSession ? readCookie(req, this.cookieName) : undefined;
    if (id) await this.sessions.close(id);
    setCookie(res, this.cookieName, '', { secure: this.secure, path: '/', maxAgeSeconds: 0, sameSite: 'Lax' });
  }
}

function viewOf(s: AdminSession): SessionView {
  const p = s.principal;
  const platformAdmin = p.role === 'PLATFORM_ADMIN';
  return {
    user: s.user,
    orgId: p.orgId,
    roles: platformAdmin ? ['PLATFORM_ADMIN'] : s.roles,
    role: p.role,
    teamId: p.teamId,
    platformAdmin,
    via: s.origin,
    csrfToken: s.csrfToken,
    expiresAt: s.expiresAt,
  };
}
