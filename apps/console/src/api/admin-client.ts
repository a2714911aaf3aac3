/**
 * The console talks to the admin API on its own origin, with the same routes and checks as any
 * other client. Signed in either by the SSO session cookie (sent by the browser; changes carry
 * the session's CSRF token) or by an admin token kept in sessionStorage for this tab and sent
 * as `Authorization: Bearer` (automation tokens, or before an org has an identity provider).
 */
const TOKEN_KEY = 'tollgate.console.adminToken';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** Whatever a request threw, as the ApiError the pages show (status 0: no answer at all). */
export function toApiError(err: unknown): ApiError {
  return err instanceof ApiError ? err : new ApiError(0, String(err));
}

export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function storeToken(token: string | null): void {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

let onUnauthorized: () => void = () => undefined;
let csrfToken: string | null = null;

/** The CSRF token of the cookie session (GET /v1/auth/session), sent with every change. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called on any 401: the token was revoked or expired, so the console signs out. */
export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

/** `expect401`: a 401 is an answer here (checking a sign-in), not a session that ended. */
export async function api<T>(
  method: string,
  path: string,
  body?: unknown,
  token = storedToken(),
  expect401 = false,
  extraHeaders?: Record<string, string>,
): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json', ...extraHeaders };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (csrfToken && method !== 'GET' && method !== 'HEAD') headers['X-CSRF-Token'] = csrfToken;
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch {
    throw new ApiError(0, 'The admin API could not be reached. Check your connection and try again.');
  }
  const text = await res.text();
  const parsed = text ? safeJson(text) : undefined;
  if (!res.ok) {
    const err = (parsed ?? {}) as { message?: string; field?: string };
    if (res.status === 401 && !expect401) onUnauthorized();
    throw new ApiError(res.status, err.message ?? `${res.status} ${res.statusText}`, err.field);
  }
  return parsed as T;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export const get = <T>(path: string) => api<T>('GET', path);
export const post = <T>(path: string, body?: unknown) => api<T>('POST', path, body);
/** A change carrying extra headers, e.g. `If-Match` with the version read (412 if it changed since). */
export const send = <T>(method: string, path: string, body: unknown, headers: Record<string, string>) =>
  api<T>(method, path, body, storedToken(), false, headers);
