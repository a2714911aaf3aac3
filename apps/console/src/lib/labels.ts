/**
 * Words for the API's enums: a page shows "monthly" or "Streamable HTTP", never "MONTH" or
 * "STREAMABLE_HTTP". An unknown value (a newer API) falls back to itself in lower case.
 */
const label =
  (table: Record<string, string>) =>
  (value: string): string =>
    table[value] ?? value.toLowerCase().replace(/_/g, ' ');

export const SCOPE_LABELS: Record<string, string> = { ORG: 'Organisation', TEAM: 'Team', USER: 'User', KEY: 'Key' };

export const PERIOD_LABELS: Record<string, string> = {
  DAY: 'daily',
  WEEK: 'weekly',
  MONTH: 'monthly',
  QUARTER: 'quarterly',
  TOTAL: 'lifetime',
};
export const periodLabel = label(PERIOD_LABELS);

export const transportLabel = label({ STDIO: 'stdio (local process)', STREAMABLE_HTTP: 'Streamable HTTP', SSE: 'SSE' });

export const authModeLabel = label({
  NONE: 'none',
  STATIC_SECRET: 'static bearer token',
  PER_USER_OAUTH: 'per-user OAuth',
});

export const tierLabel = label({ HOT: 'hot', WARM: 'warm', STANDARD: 'standard', COLD: 'cold' });

export const reviewLabel = label({ APPROVED: 'approved', PENDING: 'pending review', REJECTED: 'rejected' });

export const roleLabel = label({
  PLATFORM_ADMIN: 'platform admin',
  ORG_ADMIN: 'org admin',
  FINANCE: 'finance',
  TEAM_ADMIN: 'team admin',
  MEMBER: 'member',
});

export const keyStatusLabel = label({ ACTIVE: 'active', REVOKED: 'revoked', EXPIRED: 'expired' });
