import { escapeHtml } from '@tollgate/oauth-server';

/** Plain server-rendered pages of the sign-in and consent steps (no script, no external assets). */
function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Tollgate</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;line-height:1.45}
label{display:block;margin:.8rem 0 .2rem}input,select{width:100%;padding:.4rem;font-size:1rem}
button{margin-top:1rem;padding:.5rem 1rem;font-size:1rem}.error{color:#a00}.muted{color:#555}</style>
</head><body>${body}</body></html>`;
}

export function signInPage(
  action: string,
  csrf: string,
  opts: { clientName: string; email?: string; error?: string },
): string {
  return page(
    'Sign in',
    `<h1>Sign in to Tollgate</h1>
<p class="muted">${escapeHtml(opts.clientName)} asks to connect to your MCP tools.</p>
${opts.error ? `<p class="error" role="alert">${escapeHtml(opts.error)}</p>` : ''}
<form method="post" action="${escapeHtml(action)}" id="sso">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<input type="hidden" name="method" value="sso">
<label for="sso-email">Work email</label><input id="sso-email" name="email" type="email" autocomplete="username" required value="${escapeHtml(opts.email ?? '')}">
<button type="submit">Continue with your organisation's sign-in</button>
</form>
<p class="muted">Or, with a sign-in code from your administrator:</p>
<form method="post" action="${escapeHtml(action)}" id="code-form">
<input type="hidden" name="method" value="code">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(opts.email ?? '')}">
<label for="code">Sign-in code</label><input id="code" name="code" autocomplete="one-time-code" required>
<button type="submit">Sign in</button>
</form>
<p class="muted">Your administrator gives you a sign-in code.</p>`,
  );
}

export function orgChoicePage(
  action: string,
  csrf: string,
  opts: { clientName: string; email: string; orgs: { id: string; name: string; slug: string }[]; error?: string },
): string {
  const buttons = opts.orgs
    .map((o) => `<button type="submit" name="org" value="${escapeHtml(o.id)}">${escapeHtml(o.name)}</button>`)
    .join('\n');
  const hidden = `
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<input type="hidden" name="method" value="sso-org">
<input type="hidden" name="email" value="${escapeHtml(opts.email)}">`;
  return page(
    'Choose your organisation',
    `<h1>Choose your organisation</h1>
<p class="muted">${escapeHtml(opts.clientName)} asks to connect to your MCP tools. Sign in at your organisation's identity provider.</p>
${opts.error ? `<p class="error" role="alert">${escapeHtml(opts.error)}</p>` : ''}
${
  opts.orgs.length
    ? `<form method="post" action="${escapeHtml(action)}" id="orgs">${hidden}
<p>Organisations with an account for ${escapeHtml(opts.email)}:</p>
${buttons}
</form>`
    : ''
}
<form method="post" action="${escapeHtml(action)}" id="slug">${hidden}
<label for="orgSlug">${opts.orgs.length ? 'Or type' : 'Type'} your organisation's short name</label><input id="orgSlug" name="orgSlug" autocomplete="organization" required>
<button type="submit">Continue</button>
</form>`,
  );
}

export interface ConsentView {
  clientName: string;
  clientId: string;
  redirectHost: string;
  email: string;
  teams: { id: string; name: string }[];
  error?: string;
}

export function consentPage(action: string, csrf: string, v: ConsentView): string {
  const teamField =
    v.teams.length === 1
      ? `<input type="hidden" name="teamId" value="${escapeHtml(v.teams[0].id)}"><p>Team: <strong>${escapeHtml(v.teams[0].name)}</strong></p>`
      : `<label for="teamId">Act for the team</label><select id="teamId" name="teamId" required>${v.teams
          .map((t) => `<option value="${escapeHtml(t.id)}">${escapeHtml(t.name)}</option>`)
          .join('')}</select>`;
  return page(
    'Authorise',
    `<h1>Authorise ${escapeHtml(v.clientName)}</h1>
${v.error ? `<p class="error" role="alert">${escapeHtml(v.error)}</p>` : ''}
<p><strong>${escapeHtml(v.clientName)}</strong> <span class="muted">(client ${escapeHtml(v.clientId)})</span>
will send you back to <strong>${escapeHtml(v.redirectHost)}</strong>.</p>
<p>Signed in as ${escapeHtml(v.email)}. If you allow it, it will be able to list and call the MCP tools your
team may use through Tollgate, as you, under your team's policies, budgets and rate limits. Its use is
recorded and billed to you and the team; an administrator can revoke it at any time.</p>
<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
${teamField}
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
  );
}

export function messagePage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>`);
}
