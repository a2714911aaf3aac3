/** Names for the admin API's answers the console reads, all taken from the served OpenAPI (admin-api.gen.ts). */
import type { components } from './admin-api.gen';

type Schemas = components['schemas'];

export type AdminRole = Schemas['SessionView']['role'];

/** GET /v1/auth/session: who is signed in, by SSO cookie or bearer token. */
export type Me = Schemas['SessionView'];

export type Org = Schemas['OrgView'];

export type Team = Schemas['TeamView'];

export type User = Schemas['UserView'];

export type Key = Schemas['KeyView'];
export type KeyPage = Schemas['KeyPageView'];

/**
 * A report row. The OpenAPI leaves a row's columns open (they follow `groupBy`); their values are
 * ids, names, days and figures: strings, numbers or null.
 */
export type ReportRow = Record<string, string | number | null>;

/** GET …/reports/spend, its rows read as ReportRow. */
export type SpendReport = Omit<Schemas['SpendReportView'], 'rows'> & { rows: ReportRow[] };

export type BudgetUtilisation = Schemas['BudgetUtilisationView'];

export type ReportDimension = Schemas['SpendReportView']['groupBy'][number];
/** Every breakdown, in the order the explorer offers them (checked against the OpenAPI's list). */
export const REPORT_DIMENSIONS = [
  'team',
  'user',
  'key',
  'upstream',
  'tool',
  'day',
  'tag',
] as const satisfies readonly ReportDimension[];
