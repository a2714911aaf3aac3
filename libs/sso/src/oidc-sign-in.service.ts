import { Injectable, Logger } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { PrismaService } from '@tollgate/db';
import { recordAudit } from '@tollgate/audit';
import { selfActor, EmailDomainService } from '@tollgate/identity';
import { outboundFetch } from '@tollgate/outbound';
import { RedisService } from '@tollgate/redis';
import { SsoSignInException, SsoSignInExceptionCode } from './sso-sign-in.exception';
import { OrgIdentityProviderConnection, OrgIdentityProviderService } from './org-identity-provider.service';

const STATE_TTL_SECONDS = 600;
const RESPONSE_LIMIT_BYTES = 256 * 1024;

/** What a sign-in at an identity provider is for: an OAuth client's consent, or an admin API session. */
export type SignInPurpose = 'consent' | 'session';

/** An OpenID Connect client registration at a provider (an org's, or the platform's from config). */
export interface IdentityProviderClient {
  issuer: string;
  clientId: string;
  clientSecret: string;
  emailClaim: string;
}

/** Where a session sign-in returns and what ties it to the browser that started it. */
export interface SessionSignInContext {
  returnTo: string;
  /** A hash of a value the starting browser holds (a cookie): the callback must present it. */
  binding: string;
}

/** An admin API sign-in that completed: a person of an org, or a platform admin's verified email. */
export type SessionSignIn = SessionSignInContext &
  ({ kind: 'org'; orgId: string; userId: string } | { kind: 'platform'; email: string });

interface PendingSignIn {
  purpose?: SignInPurpose;
  /** null: the platform's provider. */
  orgId: string | null;
  interactionUid: string;
  session?: SessionSignInContext;
  nonce: string;
  verifier: string;
}

interface ProviderMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint?: string;
}

/**
 * Signs a person in at their organisation's OpenID Connect provider (authorization code with
 * PKCE, nonce and state, client_secret_basic), then matches the verified email to a Tollgate user
 * of that organisation. Every request to the provider goes through the outbound-address rule.
 */
@Injectable()
export class OidcSignInService {
  private readonly logger = new Logger(OidcSignInService.name);
  private readonly fetch = outboundFetch();

  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
    private readonly providers: OrgIdentityProviderService,
    private readonly emailDomains: EmailDomainService,
  ) {}

  /** The URL to send the browser to, at the organisation's provider. */
  async start(orgId: string, interactionUid: string, redirectUri: string): Promise<string> {
    const conn = await this.orgConnection(orgId, 'Single sign-on is not set up for your organisation.');
    return this.begin(conn, { purpose: 'consent', orgId, interactionUid }, redirectUri);
  }

  /** The URL to send the browser to for an admin API session: the org's provider, or the platform's. */
  async startSession(
    target: { orgId: string } | { platform: IdentityProviderClient },
    redirectUri: string,
    context: SessionSignInContext,
  ): Promise<string> {
    if ('platform' in target)
      return this.begin(
        target.platform,
        { purpose: 'session', orgId: null, interactionUid: '', session: context },
        redirectUri,
      );
    const conn = await this.orgConnection(target.orgId, 'Single sign-on is not set up for this organisation.');
    return this.begin(
      conn,
      { purpose: 'session', orgId: target.orgId, interactionUid: '', session: context },
      redirectUri,
    );
  }

  private async begin(
    conn: IdentityProviderClient,
    pendingFor: Omit<PendingSignIn, 'nonce' | 'verifier'>,
    redirectUri: string,
  ): Promise<string> {
    const meta = await this.metadata(conn.issuer);
    const state = randomBytes(24).toString('base64url');
    const pending: PendingSignIn = {
      ...pendingFor,
      nonce: randomBytes(16).toString('base64url'),
      verifier: randomBytes(32).toString('base64url'),
    };
    await this.redis.client.set(this.stateKey(state), JSON.stringify(pending), 'EX', STATE_TTL_SECONDS);
    const url = new URL(meta.authorization_endpoint);
    url.search = new URLSearchParams({
      client_id: conn.clientId,
      response_type: 'code',
      scope: 'openid email',
      redirect_uri: redirectUri,
      state,
      nonce: pending.nonce,
      code_challenge: createHash('sha256').update(pending.verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    return url.href;
  }

  /** Completes the sign-in the provider sent back; single use per state. */
  async finish(
    state: string,
    code: string,
    redirectUri: string,
  ): Promise<{ interactionUid: string; orgId: string; userId: string }> {
    const pending = await this.redeem(state, 'consent', 'Start again from your MCP client.');
    const conn = await this.orgConnection(
      pending.orgId ?? '',
      'Single sign-on is no longer set up for your organisation.',
    );
    const email = await this.verifiedEmail(conn, pending, code, redirectUri);
    const user = await this.matchUser(conn, email);
    return { interactionUid: pending.interactionUid, orgId: conn.orgId, userId: user.id };
  }

  /**
   * Completes an admin API sign-in; single use per state. `platform` is the platform's provider,
   * needed when the sign-in was started with it (the caller checks the email it vouched for).
   */
  async finishSession(
    state: string,
    code: string,
    redirectUri: string,
    platform?: IdentityProviderClient,
  ): Promise<SessionSignIn> {
    const pending = await this.redeem(state, 'session', 'Start the sign-in again.');
    const context = pending.session ?? { returnTo: '/', binding: '' };
    if (pending.orgId === null) {
      if (!platform)
        throw new SsoSignInException(
          SsoSignInExceptionCode.ProviderUnavailable,
          'The platform identity provider is no longer configured.',
        );
      return { kind: 'platform', email: await this.verifiedEmail(platform, pending, code, redirectUri), ...context };
    }
    const conn = await this.orgConnection(pending.orgId, 'Single sign-on is no longer set up for this organisation.');
    const email = await this.verifiedEmail(conn, pending, code, redirectUri);
    const user = await this.matchUser(conn, email);
    return { kind: 'org', orgId: conn.orgId, userId: user.id, ...context };
  }

  private async redeem(state: string, purpose: SignInPurpose, startAgain: string): Promise<PendingSignIn> {
    const raw = await this.redis.client.getdel(this.stateKey(state));
    const pending = raw ? (JSON.parse(raw) as PendingSignIn) : null;
    // A state of the other flow is as unknown as a made-up one (no sign-in crosses flows).
    if (!pending || (pending.purpose ?? 'consent') !== purpose) {
      throw new SsoSignInException(
        SsoSignInExceptionCode.SignInFailed,
        `This sign-in is unknown, used or expired. ${startAgain}`,
      );
    }
    return pending;
  }

  private async orgConnection(orgId: string, missing: string): Promise<OrgIdentityProviderConnection> {
    const conn = await this.providers.connection(orgId);
    if (!conn) throw new SsoSignInException(SsoSignInExceptionCode.ProviderUnavailable, missing);
    return conn;
  }

  /** Redeems the code (with the PKCE verifier), verifies the ID token and its nonce, and returns the email the provider vouches for. */
  private async verifiedEmail(
    conn: IdentityProviderClient,
    pending: PendingSignIn,
    code: string,
    redirectUri: string,
  ): Promise<string> {
    const meta = await this.metadata(conn.issuer);
    const basic = Buffer.from(`${encodeURIComponent(conn.clientId)}:${encodeURIComponent(conn.clientSecret)}`).toString(
      'base64',
    );
    const tokenRes = await this.request(meta.token_endpoint, {
      method: 'POST',
      headers: {
        authorization: `Basic ${basic}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        code_verifier: pending.verifier,
      }).toString(),
    });
    const idToken = (tokenRes as { id_token?: unknown }).id_token;
    if (typeof idToken !== 'string')
      throw new SsoSignInException(
        SsoSignInExceptionCode.SignInFailed,
        'Your identity provider did not sign you in (no ID token).',
      );

    const { createLocalJWKSet, jwtVerify } = await import('jose');
    const jwks = createLocalJWKSet(
      (await this.request(meta.jwks_uri, { method: 'GET', headers: { accept: 'application/json' } })) as never,
    );
    let claims: Record<string, unknown>;
    try {
      ({ payload: claims } = await jwtVerify(idToken, jwks, { issuer: meta.issuer, audience: conn.clientId }));
    } catch (err) {
      this.logger.warn(
        `${pending.orgId ? `org ${pending.orgId}` : 'platform'}: ID token refused: ${(err as Error).message}`,
      );
      throw new SsoSignInException(
        SsoSignInExceptionCode.SignInFailed,
        'Your identity provider’s answer did not verify.',
      );
    }
    if (claims.nonce !== pending.nonce)
      throw new SsoSignInException(
        SsoSignInExceptionCode.SignInFailed,
        'Your identity provider’s answer did not match this sign-in.',
      );
    // Providers may put scope claims only in userinfo (OIDC Core 5.4): ask there for the same subject.
    const accessToken = (tokenRes as { access_token?: unknown }).access_token;
    if (claims[conn.emailClaim] === undefined && meta.userinfo_endpoint && typeof accessToken === 'string') {
      const info = (await this.request(meta.userinfo_endpoint, {
        method: 'GET',
        headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
      })) as Record<string, unknown>;
      if (info.sub === claims.sub)
        claims = {
          ...info,
          ...claims,
          [conn.emailClaim]: info[conn.emailClaim],
          email_verified: info.email_verified ?? claims.email_verified,
        };
    }
    const email = claims[conn.emailClaim];
    // The standard claim counts only when the provider says it verified it.
    if (typeof email !== 'string' || (conn.emailClaim === 'email' && claims.email_verified !== true)) {
      throw new SsoSignInException(
        SsoSignInExceptionCode.SignInFailed,
        'Your identity provider did not give a verified email.',
      );
    }
    return email;
  }

  /**
   * The org's user with this email. An org's provider signs in only that org's people: an email
   * whose domain another org claims is refused whoever the provider says it is. An offboarded
   * person is refused; an unknown one is created as a member of the connection's team when it
   * creates users, and refused otherwise.
   */
  private async matchUser(conn: OrgIdentityProviderConnection, email: string): Promise<{ id: string }> {
    if (await this.emailDomains.claimedByOther(conn.orgId, email)) {
      this.logger.warn(`org ${conn.orgId}: its identity provider vouched for an email of a domain another org claims`);
      throw new SsoSignInException(
        SsoSignInExceptionCode.UnknownUser,
        `This organisation's identity provider cannot sign in ${email}: that address belongs to another organisation.`,
      );
    }
    const byEmail = { orgId: conn.orgId, email: { equals: email, mode: 'insensitive' as const } };
    const user = await this.prisma.user.findFirst({ where: byEmail, select: { id: true, offboardedAt: true } });
    if (user?.offboardedAt)
      throw new SsoSignInException(
        SsoSignInExceptionCode.UnknownUser,
        `The Tollgate account of ${email} was offboarded. Ask an administrator.`,
      );
    if (user) return { id: user.id };
    const teamId = conn.newUserTeamId;
    const team = teamId
      ? await this.prisma.team.findFirst({ where: { id: teamId, orgId: conn.orgId }, select: { id: true } })
      : null;
    if (!team)
      throw new SsoSignInException(
        SsoSignInExceptionCode.UnknownUser,
        `No Tollgate user of your organisation has the email ${email}. Ask an administrator to add you.`,
      );
    try {
      const created = await this.prisma.$transaction(async (tx) => {
        const row = await tx.user.create({
          data: { orgId: conn.orgId, email: email.trim().toLowerCase() },
          select: { id: true },
        });
        await tx.teamMember.create({ data: { orgId: conn.orgId, teamId: team.id, userId: row.id } });
        // The person is made by their own first sign-in: the row names them, in the same transaction.
        const by = selfActor('sso-sign-in', { orgId: conn.orgId, teamId: team.id, userId: row.id });
        await recordAudit(tx, by, {
          orgId: conn.orgId,
          action: 'user.created-on-sign-in',
          targetType: 'user',
          targetId: row.id,
          details: { teamId: team.id },
        });
        return row;
      });
      this.logger.log(`org ${conn.orgId}: user ${created.id} created on first sign-in, member of team ${team.id}`);
      return { id: created.id };
    } catch (err) {
      // Two first sign-ins at once: the other one created the user.
      const again = await this.prisma.user.findFirst({ where: byEmail, select: { id: true } });
      if (again) return { id: again.id };
      throw err;
    }
  }

  private async metadata(issuer: string): Promise<ProviderMetadata> {
    const meta = (await this.request(`${issuer}/.well-known/openid-configuration`, {
      method: 'GET',
      headers: { accept: 'application/json' },
    })) as Partial<ProviderMetadata>;
    if (meta.issuer !== issuer || !meta.authorization_endpoint || !meta.token_endpoint || !meta.jwks_uri) {
      throw new SsoSignInException(
        SsoSignInExceptionCode.ProviderUnavailable,
        'Your identity provider’s configuration is unusable (issuer or endpoints).',
      );
    }
    return meta as ProviderMetadata;
  }

  private async request(url: string, init: RequestInit): Promise<unknown> {
    let res: Response;
    try {
      res = await this.fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(10_000) });
    } catch (err) {
      this.logger.warn(`identity provider request failed: ${new URL(url).host}: ${(err as Error).message}`);
      throw new SsoSignInException(
        SsoSignInExceptionCode.ProviderUnavailable,
        'Your identity provider could not be reached.',
      );
    }
    const text = await res.text();
    if (text.length > RESPONSE_LIMIT_BYTES || !res.ok) {
      this.logger.warn(`identity provider answered HTTP ${res.status} at ${new URL(url).host}${new URL(url).pathname}`);
      throw new SsoSignInException(SsoSignInExceptionCode.SignInFailed, 'Your identity provider refused the sign-in.');
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new SsoSignInException(
        SsoSignInExceptionCode.ProviderUnavailable,
        'Your identity provider answered something that is not JSON.',
      );
    }
  }

  private stateKey(state: string): string {
    return this.redis.key('oauth', 'sso-state', createHash('sha256').update(state).digest('hex'));
  }
}
