/** The admin API's answers, as far as the console reads them (see /docs-json for the full spec). */
import type { components } from './admin-api.gen';

type Schemas = components['schemas'];

export type AdminRole = 'PLATFORM_ADMIN' | 'ORG_ADMIN' | 'TEAM_ADMIN' | 'FINANCE' | 'MEMBER';

/** GET /v1/auth/session: who is signed in, by SSO cookie or bearer token. */
export type Me = Schemas['SessionView'];

export type Org = Schemas['OrgView'];

export type Team = Schemas['TeamView'];

export type User = Schemas['UserView'];

export type Key = Schemas['KeyView'];

/** GET …/keys/:id/limits: the key's own budgets and rate limits. */
export type KeyLimits = Schemas['KeyLimitsView'];

export type Figures = Schemas['SpendFiguresView'];

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

export type BudgetUtilisation = Schemas['BudgetUtilisationView'];

export const REPORT_DIMENSIONS = ['team', 'user', 'key', 'upstream', 'tool', 'day', 'tag'] as const;
export type ReportDimension = (typeof REPORT_DIMENSIONS)[number];
