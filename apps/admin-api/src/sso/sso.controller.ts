import {
  BadGatewayException,
  BadRequestException,
  Controller,
  ForbiddenException,
  Get,
  HttpException,
  Inject,
  Logger,
  NotFoundException,
  Param,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import { ApiFoundResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { AdminConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import {
  SsoSignInException,
  SsoSignInExceptionCode,
  OidcSignInService,
  OrgIdentityProviderService,
  SessionSignIn,
} from '@tollgate/sso';
import { AuditService } from '../audit/audit.service';
import { AdminSessionService } from '../auth/admin-session.service';
import { Public } from '../auth/public.decorator';
import { readCookie, secureCookies, sessionCookieName, setCookie } from '../auth/session-cookie';
import { FieldValidationException } from '../common/errors/field-validation.exception';

/** Where identity providers send people back after an admin API sign-in (register it at the provider). */
export const SESSION_SSO_CALLBACK_PATH = '/v1/auth/sso/callback';
const SSO_PATH = '/v1/auth/sso';
// Ties the provider's answer to the browser that started the sign-in (login CSRF).
const BINDING_COOKIE = 'tollgate_sso_binding';
const BINDING_TTL_SECONDS = 600;
const DEFAULT_RETURN_TO = '/console/';
// Why a browser's sign-in ended without a session: the console's sign-in page explains each one.
const SIGN_IN_ERROR = Symbol('signInError');
const SIGN_IN_LOG = new Logger('SsoController');
type SignInErrorCode =
  | 'unknown_org'
  | 'idp_refused'
  | 'idp_unavailable'
  | 'unknown_user'
  | 'no_role'
  | 'not_platform_admin'
  | 'other_browser'
  | 'failed';

/**
 * Single sign-on into the admin API (and the console): the browser goes to the organisation's
 * identity provider (or the platform's) with PKCE, state and nonce, comes back to the callback,
 * and leaves with a session cookie. The OIDC client is the OAuth server's (libs/oauth-server).
 */
@ApiTags('auth')
@Controller()
export class SsoController {
  private readonly secure: boolean;

  constructor(
    private readonly oidc: OidcSignInService,
    private readonly providers: OrgIdentityProviderService,
    private readonly sessions: AdminSessionService,
    private readonly audit: AuditService,
    @Inject(TOLLGATE_CONFIG) private readonly config: AdminConfig,
  ) {
    this.secure = secureCookies(config.admin.publicUrl);
  }

  @Get('v1/auth/sso/:org/start')
  @Public()
  @ApiOperation({
    summary:
      'Sign in to the admin API at the organisation’s identity provider (by org slug or id); ends at the callback with a session cookie',
  })
  @ApiParam({ name: 'org', description: 'The organisation’s slug or id' })
  @ApiQuery({
    name: 'returnTo',
    required: false,
    description: 'A path on this origin to land on afterwards (default /console/)',
  })
  @ApiFoundResponse({ description: 'Redirect to the identity provider' })
  async startOrg(
    @Param('org') org: string,
    @Query('returnTo') returnTo: unknown,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await inBrowser(req, res, async () => {
      const target = returnToPath(returnTo);
      const redirectUri = this.redirectUri();
      const found = org.length <= 200 ? await this.providers.orgWithProvider(org) : null;
      if (!found)
        throw refusal('unknown_org', new NotFoundException(`organization ${org.slice(0, 200)} has no single sign-on`));
      await this.redirectToProvider(res, { orgId: found.id }, redirectUri, target);
    });
  }

  @Get('v1/auth/platform-sso/start')
  @Public()
  @ApiOperation({ summary: 'Sign a platform admin in at the platform’s identity provider (PLATFORM_SSO_* variables)' })
  @ApiQuery({ name: 'returnTo', required: false })
  @ApiFoundResponse({ description: 'Redirect to the identity provider' })
  async startPlatform(@Query('returnTo') returnTo: unknown, @Req() req: Request, @Res() res: Response): Promise<void> {
    await inBrowser(req, res, async () => {
      const target = returnToPath(returnTo);
      const redirectUri = this.redirectUri();
      const platform = this.platformClient();
      if (!platform)
        throw new NotFoundException('no platform identity provider is configured (PLATFORM_SSO_ISSUER and friends)');
      await this.redirectToProvider(res, { platform }, redirectUri, target);
    });
  }

  @Get('v1/auth/sso/callback')
  @Public()
  @ApiOperation({
    summary: 'Where the identity provider sends the browser back; sets the session cookie and redirects to returnTo',
    description:
      'A browser (Accept: text/html) that cannot be signed in is sent to /console/?signInError=<code> instead of a JSON error.',
  })
  @ApiFoundResponse({ description: 'Signed in: redirect to returnTo' })
  async callback(@Req() req: Request, @Res() res: Response): Promise<void> {
    await inBrowser(req, res, () => this.finishSignIn(req, res));
  }

  private async finishSignIn(req: Request, res: Response): Promise<void> {
    const q = req.query as Record<string, unknown>;
    if (typeof q.error === 'string')
      throw refusal(
        'idp_refused',
        new BadRequestException(`the identity provider refused the sign-in: ${q.error.slice(0, 100)}`),
      );
    const state = typeof q.state === 'string' ? q.state.slice(0, 200) : '';
    const code = typeof q.code === 'string' ? q.code.slice(0, 2000) : '';
    if (!state) throw new FieldValidationException('state', ['state is required']);
    if (!code) throw new FieldValidationException('code', ['code is required']);
    const done = await signInStep(() =>
      this.oidc.finishSession(state, code, this.redirectUri(), this.platformClient()),
    );
    setCookie(res, BINDING_COOKIE, '', { secure: this.secure, path: SSO_PATH, maxAgeSeconds: 0, sameSite: 'Lax' });
    if (!bindingMatches(readCookie(req, BINDING_COOKIE), done.binding)) {
      throw refusal(
        'other_browser',
        new BadRequestException('this sign-in was started in another browser; start it again here'),
      );
    }
    const opened = await this.openSession(done);
    setCookie(res, sessionCookieName(this.secure), opened.id, {
      secure: this.secure,
      path: '/',
      maxAgeSeconds: this.sessions.maxAgeSeconds,
      sameSite: 'Lax',
    });
    res.redirect(303, done.returnTo);
  }

  private async openSession(done: SessionSignIn): Promise<{ id: string }> {
    if (done.kind === 'platform') {
      const email = done.email.toLowerCase();
      if (!this.config.admin.platformSso?.adminEmails.includes(email))
        throw refusal(
          'not_platform_admin',
          new ForbiddenException(`${done.email} is not a platform admin (PLATFORM_SSO_ADMIN_EMAILS)`),
        );
      return this.sessions.open({ origin: 'platform-sso', email });
    }
    const opened = await this.sessions.open({ origin: 'org-sso', orgId: done.orgId, userId: done.userId });
    const session = await this.sessions.resolve(opened.id);
    if (!session) {
      await this.sessions.close(opened.id);
      throw refusal(
        'no_role',
        new ForbiddenException(
          'you hold no role in this organisation (no team membership, no org role); ask an administrator',
        ),
      );
    }
    await this.audit.record(session.principal, {
      orgId: done.orgId,
      action: 'session.signed-in',
      targetType: 'user',
      targetId: done.userId,
      details: { roles: session.roles, via: 'org-sso' },
    });
    return opened;
  }

  private async redirectToProvider(
    res: Response,
    target: Parameters<OidcSignInService['startSession']>[0],
    redirectUri: string,
    returnTo: string,
  ): Promise<void> {
    const binding = randomBytes(24).toString('base64url');
    const url = await signInStep(() =>
      this.oidc.startSession(target, redirectUri, { returnTo, binding: hashOf(binding) }),
    );
    setCookie(res, BINDING_COOKIE, binding, {
      secure: this.secure,
      path: SSO_PATH,
      maxAgeSeconds: BINDING_TTL_SECONDS,
      sameSite: 'Lax',
    });
    res.redirect(302, url);
  }

  private redirectUri(): string {
    const base = this.config.oauth.issuer;
    if (!base)
      throw new NotFoundException(
        'single sign-on needs ADMIN_PUBLIC_URL (the redirect URI registered at the identity provider)',
      );
    return `${base}${SESSION_SSO_CALLBACK_PATH}`;
  }

  private platformClient() {
    const p = this.config.admin.platformSso;
    return p
      ? { issuer: p.issuer, clientId: p.clientId, clientSecret: p.clientSecret, emailClaim: 'email' }
      : undefined;
  }
}

/** A path on this origin: `/...` but not `//host` or `/\host` (open redirect). */
function returnToPath(value: unknown): string {
  if (value === undefined) return DEFAULT_RETURN_TO;
  if (typeof value !== 'string' || value.length > 500 || !/^\/(?![/\\])[\x21-\x7e]*$/.test(value)) {
    throw new FieldValidationException('returnTo', ['returnTo must be a path on this origin, such as /console/']);
  }
  return value;
}

/** The sign-in's own errors as the admin API's 4xx/502; anything else is rethrown. */
async function signInStep<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (!(err instanceof SsoSignInException)) throw err;
    switch (err.code) {
      case SsoSignInExceptionCode.ProviderUnavailable:
        throw refusal('idp_unavailable', new BadGatewayException(err.message));
      case SsoSignInExceptionCode.UnknownUser:
        throw refusal('unknown_user', new ForbiddenException(err.message));
      case SsoSignInExceptionCode.SignInFailed:
        throw refusal('failed', new BadRequestException(err.message));
    }
  }
}

function refusal(code: SignInErrorCode, err: HttpException): HttpException {
  return Object.assign(err, { [SIGN_IN_ERROR]: code });
}

/**
 * A person's browser (it asks for HTML) that cannot be signed in goes back to the console's
 * sign-in page, which says why, instead of a page of JSON; API clients keep the JSON error.
 */
async function inBrowser(req: Request, res: Response, step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (err) {
    if (!(err instanceof HttpException) || req.accepts(['json', 'html']) !== 'html') throw err;
    const code = (err as { [SIGN_IN_ERROR]?: SignInErrorCode })[SIGN_IN_ERROR] ?? 'failed';
    SIGN_IN_LOG.warn(`browser sign-in refused: ${code} (HTTP ${err.getStatus()})`);
    res.redirect(303, `${DEFAULT_RETURN_TO}?signInError=${code}`);
  }
}

function hashOf(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

function bindingMatches(cookie: string | undefined, expected: string): boolean {
  if (!cookie || !expected) return false;
  const a = Buffer.from(hashOf(cookie));
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
