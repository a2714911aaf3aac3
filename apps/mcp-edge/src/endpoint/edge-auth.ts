import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';

/** The bearer credential of a request, or null. */
export function bearerToken(req: IncomingMessage): string | null {
  const header = req.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

/** The scheme the client used: the first `X-Forwarded-Proto` (the edge runs behind proxies), else the socket's. */
function requestProtocol(req: IncomingMessage): string {
  const forwarded = req.headers['x-forwarded-proto'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0].trim();
  if (first) return first;
  return (req.socket as TLSSocket).encrypted ? 'https' : 'http';
}

export function edgeBaseUrl(req: IncomingMessage, publicUrl: string | undefined): string {
  return publicUrl ?? `${requestProtocol(req)}://${req.headers.host}`;
}

/** A JSON answer on a plain Node response (the /mcp endpoint runs outside Express). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
  onSent?: () => void,
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text, onSent);
}

/** RFC 9728 metadata; the `/mcp` variant (path of the resource appended) is the one 401s point at. */
export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';
/** The scope OAuth clients ask Tollgate's authorization server for. */
export const EDGE_OAUTH_SCOPE = 'mcp';

/**
 * Why a credential was refused: none sent, a refused OAuth access token, or a refused `tg_`
 * virtual key (unknown, revoked or expired).
 */
export type UnauthorizedReason = 'missing' | 'invalid' | 'virtual-key';

/** A refused credential that is a virtual key (`tg_...`, well-formed or not) rather than an OAuth token. */
export function refusalOf(secret: string): Exclude<UnauthorizedReason, 'missing'> {
  return secret.startsWith('tg_') ? 'virtual-key' : 'invalid';
}

/**
 * 401 with `WWW-Authenticate` and a JSON-RPC shaped body so MCP clients can show the reason. With no
 * credential, or a refused OAuth token, it points clients at the protected-resource metadata
 * (RFC 9728) to sign in; a refused virtual key gets no such pointer: signing in cannot mend a key
 * someone typed wrong or revoked, and a client would open a browser sign-in for nothing.
 */
export function sendUnauthorized(
  req: IncomingMessage,
  res: ServerResponse,
  publicUrl: string | undefined,
  reason: UnauthorizedReason,
): void {
  const params = [`realm="tollgate"`];
  if (reason === 'virtual-key')
    params.push(
      `error="invalid_token"`,
      `error_description="The virtual key is unknown or revoked (or expired): check the tg_ key the client sends, or ask an admin for a new one"`,
    );
  else
    params.push(
      `resource_metadata="${edgeBaseUrl(req, publicUrl)}${PROTECTED_RESOURCE_METADATA_PATH}/mcp"`,
      `scope="${EDGE_OAUTH_SCOPE}"`,
    );
  if (reason === 'invalid')
    params.push(
      `error="invalid_token"`,
      `error_description="The access token is unknown, revoked, expired or for another resource"`,
    );
  const message = {
    missing: 'Authentication required: send "Authorization: Bearer <virtual key>"',
    invalid: 'Invalid access token',
    'virtual-key': 'Invalid virtual key: unknown or revoked',
  }[reason];
  sendJson(
    res,
    401,
    { jsonrpc: '2.0', error: { code: -32001, message }, id: null },
    { 'WWW-Authenticate': `Bearer ${params.join(', ')}` },
  );
}

/** JSON-RPC error code of a credential that is valid but may not be used now (its organisation is disabled). */
export const ORG_DISABLED_RPC_CODE = -32003;

/**
 * 403 for a live key of a disabled organisation: the credential is right (a 401 would send OAuth
 * clients to sign in again), the organisation is not; `data.code` is ORG_DISABLED.
 */
export function sendOrgDisabled(res: ServerResponse): void {
  sendJson(res, 403, {
    jsonrpc: '2.0',
    error: {
      code: ORG_DISABLED_RPC_CODE,
      message: 'Organization disabled: its keys are refused until a platform admin enables it again',
      data: { code: 'ORG_DISABLED', hint: 'Ask your Tollgate platform admin; nothing was called or charged' },
    },
    id: null,
  });
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** DNS-rebinding protection: the Host (and Origin, when sent) must name this service. */
export function isAllowedHost(req: IncomingMessage, allowedHosts: string[]): boolean {
  const hostOk = (host: string | undefined) => {
    if (!host) return false;
    const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0];
    return LOCAL_HOSTS.has(name) || allowedHosts.includes(name) || allowedHosts.includes(host);
  };
  if (!hostOk(req.headers.host)) return false;
  const origin = req.headers.origin;
  if (origin && origin !== 'null') {
    try {
      return hostOk(new URL(origin).host);
    } catch {
      return false;
    }
  }
  return true;
}
