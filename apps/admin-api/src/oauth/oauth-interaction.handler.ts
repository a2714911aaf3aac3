import { Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { AdminConfig } from '@tollgate/config';
import { PrismaService } from '@tollgate/db';
import { MCP_SCOPE, OAUTH_INTERACTION_PATH, OAuthGrantKeys, OAuthProvider } from '@tollgate/oauth-server';
import { SsoSignInException, OidcSignInService, OrgIdentityProviderService, SignInCodeService } from '@tollgate/sso';
import { RedisService } from '@tollgate/redis';
import { consentPage, messagePage, orgChoicePage, signInPage } from './oauth-pages';

const FORM_LIMIT_BYTES = 16 * 1024;
/** Where organisations' identity providers send people back (register it at the provider). */
export const SSO_CALLBACK_PATH = '/oauth/sso/callback';
const SSO_DONE_TTL_SECONDS = 120;

interface InteractionDetails {
  uid: string;
  prompt: { name: string; details: Record<string, unknown> };
  params: Record<string, string>;
  session?: { accountId: string };
  grantId?: string;
}

/**
 * The sign-in and consent steps of the authorization server, on plain HTML forms. The interaction
 * is bound to its signed cookie; each form also carries a token derived from the interaction id
 * (CSRF), and the pages forbid framing.
 */
@Injectable()
export class OAuthInteractionHandler {
  private readonly logger = new Logger(OAuthInteractionHandler.name);
  private provider: OAuthProvider | null = null;
  private csrfKey = '';
  private issuer = '';
  private resource = '';
  private grantTtlSeconds = 0;

  constructor(
    private readonly prisma: PrismaService,
    private readonly signInCodes: SignInCodeService,
    private readonly grantKeys: OAuthGrantKeys,
    private readonly identityProviders: OrgIdentityProviderService,
    private readonly oidcSignIn: OidcSignInService,
    private readonly redis: RedisService,
  ) {}

  attach(provider: OAuthProvider, config: AdminConfig): void {
    this.provider = provider;
    this.csrfKey = config.security.keyHashSecret;
    this.resource = config.oauth.resource ?? '';
    this.issuer = config.oauth.issuer ?? '';
    this.grantTtlSeconds = config.admin.oauthRefreshTokenTtlSeconds;
  }

  /** Serves GET (show the step) and POST (submit it) at /oauth/interaction/:uid; never rejects. */
  async handle(req: Request, res: Response): Promise<void> {
    res.setHeader('X-Frame-Options', 'DENY');
    // No form-action: browsers apply it to the redirects after a submit (to the IdP, to the client).
    res.setHeader(
      'Content-Security-Policy',
      "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'",
    );
    res.setHeader('Cache-Control', 'no-store');
    try {
      if (req.path === SSO_CALLBACK_PATH) return await this.ssoCallback(req, res);
      let uid = req.path.slice(OAUTH_INTERACTION_PATH.length + 1);
      // `<uid>/sso`: back from the organisation's identity provider (under the interaction cookie's path).
      const ssoReturn = uid.endsWith('/sso');
      if (ssoReturn) uid = uid.slice(0, -'/sso'.length);
      let details: InteractionDetails;
      try {
        details = (await this.provider.interactionDetails(req, res)) as InteractionDetails;
      } catch {
        return this.send(
          res,
          400,
          messagePage('Sign-in expired', 'This sign-in is unknown or has expired. Start again from your MCP client.'),
        );
      }
      if (details.uid !== uid)
        return this.send(
          res,
          400,
          messagePage(
            'Sign-in expired',
            'This sign-in does not match your browser session. Start again from your MCP client.',
          ),
        );
      if (ssoReturn) return await this.completeSso(req, res, details);
      if (req.method === 'GET') return await this.show(res, details);
      if (req.method !== 'POST') return this.send(res, 405, messagePage('Not allowed', 'Use the form.'));
      const form = await readForm(req);
      if (!form || !this.csrfOk(uid, form.get('csrf')))
        return this.send(
          res,
          403,
          messagePage('Refused', 'The form was not sent from this page. Start again from your MCP client.'),
        );
      if (details.prompt.name === 'login') return await this.submitSignIn(req, res, details, form);
      if (details.prompt.name === 'consent') return await this.submitConsent(req, res, details, form);
      return this.send(res, 400, messagePage('Unexpected step', `Unknown step ${details.prompt.name}.`));
    } catch (err) {
      this.logger.error(`oauth interaction failed: ${(err as Error).message}`);
      if (!res.headersSent)
        this.send(
          res,
          500,
          messagePage('Something went wrong', 'The sign-in could not be completed. Start again from your MCP client.'),
        );
    }
  }

  private async show(
    res: Response,
    details: InteractionDetails,
    error?: string,
    email?: string,
    status?: number,
  ): Promise<void> {
    const action = `${OAUTH_INTERACTION_PATH}/${details.uid}`;
    const client = await this.provider.Client.find(details.params.client_id);
    const clientName = client?.clientName ?? details.params.client_id;
    if (details.prompt.name === 'login') {
      return this.send(
        res,
        status ?? (error ? 401 : 200),
        signInPage(action, this.csrfToken(details.uid), { clientName, email, error }),
      );
    }
    const accountId = details.session?.accountId;
    const user = accountId
      ? await this.prisma.user.findFirst({
          where: { id: accountId },
          include: { memberships: { include: { team: true } } },
        })
      : null;
    if (!user)
      return this.send(
        res,
        400,
        messagePage('Sign-in expired', 'Your account was not found. Start again from your MCP client.'),
      );
    const teams = user.memberships
      .map((m) => ({ id: m.team.id, name: m.team.name }))
      .sort((a, b) => a.name.localeCompare(b.name));
    if (teams.length === 0) {
      await this.provider.interactionFinished(
        res.req,
        res,
        { error: 'access_denied', error_description: 'the user is in no team' },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    return this.send(
      res,
      error ? 400 : 200,
      consentPage(action, this.csrfToken(details.uid), {
        clientName,
        clientId: details.params.client_id,
        redirectHost: hostOf(details.params.redirect_uri),
        email: user.email,
        teams,
        error,
      }),
    );
  }

  /** Which organisation's sign-in to use: those that have this email by name, or a typed slug. */
  private async showOrgChoice(
    res: Response,
    details: InteractionDetails,
    email: string,
    error?: string,
  ): Promise<void> {
    const client = await this.provider.Client.find(details.params.client_id);
    const orgs = email ? await this.identityProviders.orgsFor(email) : [];
    return this.send(
      res,
      error ? 400 : 200,
      orgChoicePage(`${OAUTH_INTERACTION_PATH}/${details.uid}`, this.csrfToken(details.uid), {
        clientName: client?.clientName ?? details.params.client_id,
        email,
        orgs,
        error,
      }),
    );
  }

  private async submitSignIn(
    req: Request,
    res: Response,
    details: InteractionDetails,
    form: URLSearchParams,
  ): Promise<void> {
    const email = (form.get('email') ?? '').slice(0, 320);
    if (form.get('method') === 'sso') {
      // An email never picks an organisation: the person chooses theirs (one with this email, or a typed slug).
      return this.showOrgChoice(res, details, email);
    }
    if (form.get('method') === 'sso-org') {
      const chosen = (form.get('org') ?? '').slice(0, 64);
      const slug = (form.get('orgSlug') ?? '').trim().toLowerCase().slice(0, 100);
      const orgId = chosen
        ? ((await this.identityProviders.orgsFor(email)).find((o) => o.id === chosen)?.id ?? null)
        : slug
          ? ((await this.identityProviders.orgWithProvider(slug))?.id ?? null)
          : null;
      if (!orgId)
        return this.showOrgChoice(
          res,
          details,
          email,
          slug
            ? `No organisation with single sign-on has the short name “${slug}”.`
            : 'Choose your organisation, or type its short name.',
        );
      try {
        res.redirect(303, await this.oidcSignIn.start(orgId, details.uid, `${this.issuer}${SSO_CALLBACK_PATH}`));
      } catch (err) {
        if (err instanceof SsoSignInException) return this.showOrgChoice(res, details, email, err.message);
        throw err;
      }
      return;
    }
    const source = createHmac('sha256', this.csrfKey)
      .update(`sign-in-source:${req.ip ?? ''}`)
      .digest('hex');
    const verdict = await this.signInCodes.verify(email, (form.get('code') ?? '').slice(0, 64), source);
    if (verdict.kind === 'wait')
      return this.show(
        res,
        details,
        `Too many wrong sign-in codes from your network: try again in ${verdict.seconds} seconds.`,
        email,
        429,
      );
    if (verdict.kind === 'wrong') return this.show(res, details, 'That email and sign-in code do not match.', email);
    await this.provider.interactionFinished(
      req,
      res,
      { login: { accountId: verdict.userId } },
      { mergeWithLastSubmission: false },
    );
  }

  private async submitConsent(
    req: Request,
    res: Response,
    details: InteractionDetails,
    form: URLSearchParams,
  ): Promise<void> {
    if (form.get('decision') !== 'allow') {
      await this.provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'the user denied the request' },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    const accountId = details.session?.accountId;
    const user = accountId ? await this.prisma.user.findFirst({ where: { id: accountId } }) : null;
    const teamId = form.get('teamId') ?? '';
    const member =
      user && /^[0-9a-f-]{36}$/i.test(teamId)
        ? await this.prisma.teamMember.findFirst({ where: { userId: user.id, teamId } })
        : null;
    if (!user || !member) return this.show(res, details, 'Choose one of your teams.');
    const clientId = details.params.client_id;
    const client = await this.provider.Client.find(clientId);
    const grant = details.grantId
      ? await this.provider.Grant.find(details.grantId)
      : new this.provider.Grant({ accountId: user.id, clientId });
    const missing = details.prompt.details;
    if (Array.isArray(missing.missingOIDCScope)) grant.addOIDCScope((missing.missingOIDCScope as string[]).join(' '));
    // Only the edge's resource, and only its scope, can be granted.
    grant.addResourceScope(this.resource, MCP_SCOPE);
    const grantId: string = await grant.save();
    // The key is made when the client redeems its code (an abandoned consent leaves none).
    await this.grantKeys.recordConsent(
      grantId,
      {
        orgId: user.orgId,
        userId: user.id,
        teamId,
        clientId,
        clientName: String(client?.clientName ?? clientId).slice(0, 200),
        redirectHost: hostOf(details.params.redirect_uri).slice(0, 300),
      },
      this.grantTtlSeconds,
    );
    await this.provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  /** The identity provider sent the browser back: check it, then return to the interaction. */
  private async ssoCallback(req: Request, res: Response): Promise<void> {
    const q = req.query as Record<string, unknown>;
    const state = typeof q.state === 'string' ? q.state.slice(0, 200) : '';
    const code = typeof q.code === 'string' ? q.code.slice(0, 2000) : '';
    if (typeof q.error === 'string')
      return this.send(
        res,
        400,
        messagePage(
          'Sign-in refused',
          `Your identity provider answered: ${q.error.slice(0, 200)}. Start again from your MCP client.`,
        ),
      );
    if (!state || !code)
      return this.send(
        res,
        400,
        messagePage('Sign-in failed', 'The identity provider sent no code or state. Start again from your MCP client.'),
      );
    try {
      const done = await this.oidcSignIn.finish(state, code, `${this.issuer}${SSO_CALLBACK_PATH}`);
      const ticket = randomBytes(24).toString('base64url');
      await this.redis.client.set(this.ssoDoneKey(ticket), JSON.stringify(done), 'EX', SSO_DONE_TTL_SECONDS);
      res.redirect(303, `${OAUTH_INTERACTION_PATH}/${encodeURIComponent(done.interactionUid)}/sso?ticket=${ticket}`);
    } catch (err) {
      if (err instanceof SsoSignInException) return this.send(res, 400, messagePage('Sign-in failed', err.message));
      throw err;
    }
  }

  private async completeSso(req: Request, res: Response, details: InteractionDetails): Promise<void> {
    const ticket = typeof req.query.ticket === 'string' ? req.query.ticket.slice(0, 100) : '';
    const raw = ticket ? await this.redis.client.getdel(this.ssoDoneKey(ticket)) : null;
    const done = raw ? (JSON.parse(raw) as { interactionUid: string; userId: string }) : null;
    if (!done || done.interactionUid !== details.uid || details.prompt.name !== 'login') {
      return this.send(
        res,
        400,
        messagePage('Sign-in expired', 'This sign-in is unknown, used or expired. Start again from your MCP client.'),
      );
    }
    await this.provider.interactionFinished(
      req,
      res,
      { login: { accountId: done.userId } },
      { mergeWithLastSubmission: false },
    );
  }

  private ssoDoneKey(ticket: string): string {
    return this.redis.key('oauth', 'sso-done', createHmac('sha256', this.csrfKey).update(ticket).digest('hex'));
  }

  private csrfToken(uid: string): string {
    return createHmac('sha256', this.csrfKey).update(`oauth-interaction:${uid}`).digest('base64url');
  }

  private csrfOk(uid: string, token: string | null): boolean {
    if (!token) return false;
    const a = Buffer.from(token);
    const b = Buffer.from(this.csrfToken(uid));
    return a.length === b.length && timingSafeEqual(a, b);
  }

  private send(res: Response, status: number, html: string): void {
    res.status(status).type('html').send(html);
  }
}

function hostOf(uri: string | undefined): string {
  try {
    return new URL(uri ?? '').host || (uri ?? '');
  } catch {
    return uri ?? '';
  }
}

/** An urlencoded form body, or null when it is not one or is too large. */
async function readForm(req: Request): Promise<URLSearchParams | null> {
  if (!req.is('application/x-www-form-urlencoded')) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > FORM_LIMIT_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
