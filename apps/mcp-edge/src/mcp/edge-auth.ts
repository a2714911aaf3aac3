import type { Request, Response } from 'express';

/** The bearer credential of a request, or null. */
export function bearerToken(req: Request): string | null {
  const header = req.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

export function edgeBaseUrl(req: Request, publicUrl: string | undefined): string {
  return publicUrl ?? `${req.protocol}://${req.headers.host}`;
}

/**
 * 401 with `WWW-Authenticate`, pointing clients at the protected-resource metadata (RFC 9728),
 * and a JSON-RPC shaped body so MCP clients can show the reason.
 */
export function sendUnauthorized(req: Request, res: Response, publicUrl: string | undefined, reason: 'missing' | 'invalid'): void {
  const base = edgeBaseUrl(req, publicUrl);
  const params = [`realm="tollgate"`, `resource_metadata="${base}/.well-known/oauth-protected-resource"`];
  if (reason === 'invalid') params.push(`error="invalid_token"`, `error_description="The virtual key is unknown, revoked or expired"`);
  res
    .status(401)
    .setHeader('WWW-Authenticate', `Bearer ${params.join(', ')}`)
    .json({
      jsonrpc: '2.0',
      error: { code: -32001, message: reason === 'missing' ? 'Authentication required: send "Authorization: Bearer <virtual key>"' : 'Invalid virtual key' },
      id: null,
    });
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** DNS-rebinding protection: the Host (and Origin, when sent) must name this service. */
export function isAllowedHost(req: Request, allowedHosts: string[]): boolean {
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
