import { escapeHtml } from '@tollgate/oauth-server';

/**
 * The page a person's browser lands on after connecting an account at a per-user OAuth upstream
 * (instead of the JSON an API client gets). Plain HTML, no script: the console tab that started
 * the connection notices it by itself (it watches its connections while one is being made).
 */
export function connectionResultPage(result: { ok: true; upstream: string } | { ok: false; reason: string }): string {
  const title = result.ok ? `Connected to ${result.upstream}` : 'The connection did not work';
  const body = result.ok
    ? `<h1>${escapeHtml(title)}</h1>
<p role="status">Your account is connected. Tollgate keeps its tokens encrypted and renews them; agents can now call
<strong>${escapeHtml(result.upstream)}</strong>'s tools as you.</p>
<p>You can close this tab: the console shows the connection. Or <a href="/console/connections">open My connections</a>.</p>`
    : `<h1>${escapeHtml(title)}</h1>
<p role="alert" class="error">${escapeHtml(result.reason)}</p>
<p>Start again from <a href="/console/connections">My connections</a> in the console.</p>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Tollgate</title><link rel="icon" href="/console/favicon.svg" type="image/svg+xml">
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;line-height:1.45}
.error{color:#a00}@media (prefers-color-scheme:dark){body{background:#1a1b1e;color:#e9ecef}a{color:#91a7ff}.error{color:#ff8787}}</style>
</head><body><main>${body}</main></body></html>`;
}
