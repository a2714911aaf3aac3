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
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** RFC 9728 metadata; the `/mcp` variant (path of the resource appended) is the one 401s point at. */
export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';
/** The scope OAuth clients ask Tollgate's authorization server for. */
export const EDGE_OAUTH_SCOPE = 'mcp';

/**
 * 401 with `WWW-Authenticate`, pointing clients at the protected-resource metadata (RFC 9728),
 * and a JSON-RPC shaped body so MCP clients can show the reason.
 */
export function sendUnauthorized(
  req: IncomingMessage,
  res: ServerResponse,
  publicUrl: string | undefined,
  reason: 'missing' | 'invalid',
): void {
  const base = edgeBaseUrl(req, publicUrl);
  const params = [
    `realm="tollgate"`,
    `resource_metadata="${base}${PROTECTED_RESOURCE_METADATA_PATH}/mcp"`,
    `scope="${EDGE_OAUTH_SCOPE}"`,
  ];
  if (reason === 'invalid')
    params.push(
      `error="invalid_token"`,
      `error_description="The virtual key or access token is unknown, revoked, expired or for another resource"`,
    );
  sendJson(
    res,
    401,
    {
      jsonrpc: '2.0',
      error: {
        code: -32001,
        message:
          reason === 'missing'
            ? 'Authentication required: send "Authorization: Bearer <virtual key>"'
            : 'Invalid virtual key',
      },
      id: null,
    },
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
