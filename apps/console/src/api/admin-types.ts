/** The admin API's answers, as far as the console reads them (see /docs-json for the full spec). */

export type AdminRole = 'PLATFORM_ADMIN' | 'ORG_ADMIN' | 'TEAM_ADMIN' | 'FINANCE' | 'MEMBER';

/** GET /v1/auth/session: who is signed in, by SSO cookie or bearer token. */
export interface Me {
  role: AdminRole;
  roles: string[];
  orgId: string | null;
  teamId: string | null;
  platformAdmin: boolean;
  via: 'org-sso' | 'platform-sso' | 'bootstrap-token' | 'bearer';
  user: { id: string; name: string | null; email: string } | null;
  /** For changes made with the session cookie (X-CSRF-Token); null for bearer callers. */
  csrfToken: string | null;
  expiresAt: string | null;
}

export interface Org {
  id: string;
  name: string;
  slug: string;
  timeZone: string;
  /** ISO 4217 code naming the unit of the org's micro-unit amounts. */
  currency: string;
}

export interface Team {
  id: string;
  name: string;
}

export interface User {
  id: string;
  email: string;
  name: string | null;
}

export interface Key {
  id: string;
  teamId: string;
  userId: string;
  name: string;
  prefix: string;
  kind: 'STATIC' | 'OAUTH';
  oauthClientName: string | null;
  disclosureMode: string | null;
  tags: string[];
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
}

/** GET …/keys/:id/limits: the key's own budgets and rate limits. */
export interface KeyLimits {
  keyId: string;
  budgets: {
    id: string;
    period: string;
    limitMicros: number | string;
    mode: 'HARD' | 'SOFT';
    alertThresholds: number[];
  }[];
  rateLimits: {
    id: string;
    toolPattern: string;
    callsPerWindow: number | null;
    windowSeconds: number;
    maxConcurrent: number | null;
  }[];
}

export interface Figures {
  calls: number;
  errors: number;
  outputTokens: number;
  costMicros: number | string;
}

export type ReportRow = Record<string, string | number | null>;

export interface SpendReport {
  from: string;
  to: string;
  timeZone: string;
  groupBy: string[];
  columns: string[];
  rows: ReportRow[];
  totals: Figures;
  /** The filters the API applied, those it forced for the caller's role included. */
  filters?: Partial<Record<'teamId' | 'userId' | 'keyId' | 'upstreamId' | 'tool' | 'tag', string[] | string | null>>;
  /** Whose spend this is: the org's, a team admin's team's or a member's own. */
  scope?: { kind: 'org' | 'team' | 'user'; id: string | null };
}

export interface BudgetUtilisation {
  budgetId: string;
  scope: 'ORG' | 'TEAM' | 'USER' | 'KEY';
  scopeId: string;
  period: string;
  mode: 'HARD' | 'SOFT';
  limitMicros: number | string;
  spentMicros: number | string;
  reservedMicros: number | string;
  utilisationBp: number | null;
  periodStart: string;
  resetsAt: string | null;
}

export const REPORT_DIMENSIONS = ['team', 'user', 'key', 'upstream', 'tool', 'day', 'tag'] as const;
export type ReportDimension = (typeof REPORT_DIMENSIONS)[number];
