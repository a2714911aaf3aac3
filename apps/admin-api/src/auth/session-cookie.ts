import type { Request, Response } from 'express';

/** The header a cookie-authenticated change must carry (the value GET /v1/auth/session returns). */
export const CSRF_HEADER = 'x-csrf-token';

const PLAIN_NAME = 'tollgate_session';
// Over https the __Host- prefix pins the cookie to this host and path / (no Domain, Secure).
const SECURE_NAME = '__Host-tollgate_session';

/** Whether cookies are Secure: the admin API's public URL is https. */
export function secureCookies(publicUrl: string | undefined): boolean {
  return !!publicUrl?.startsWith('https://');
}

export function sessionCookieName(secure: boolean): string {
  return secure ? SECURE_NAME : PLAIN_NAME;
}

/** A cookie of the request by name (first one wins), or undefined. */
export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) {
      try {
        return decodeURIComponent(part.slice(i + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

export interface CookieOptions {
  secure: boolean;
  path: string;
  maxAgeSeconds: number;
  sameSite: 'Lax' | 'Strict';
}

/** Sets an HttpOnly cookie (Max-Age 0 clears it). */
export function setCookie(res: Response, name: string, value: string, o: CookieOptions): void {
  const attrs = [
    `${name}=${encodeURIComponent(value)}`,
    `Path=${o.path}`,
    `Max-Age=${o.maxAgeSeconds}`,
    'HttpOnly',
    `SameSite=${o.sameSite}`,
  ];
  if (o.secure) attrs.push('Secure');
  res.append('Set-Cookie', attrs.join('; '));
}
