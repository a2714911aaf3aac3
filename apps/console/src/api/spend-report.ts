import { adminApi, answer } from './admin-client';
import type { operations } from './admin-api.gen';
import type { SpendReport } from './admin-types';

export type SpendQuery = operations['ReportsController_spendReport']['parameters']['query'];

/** The largest `top` the API takes (its OpenAPI's maximum, the report row cap): every row of a report it allows. */
export const MAX_REPORT_TOP = 50_000;

/** GET …/reports/spend, its open rows read as ReportRow (admin-types.ts says why). */
export function spendReport(orgId: string, query: SpendQuery): Promise<SpendReport> {
  return answer(
    adminApi.GET('/v1/orgs/{orgId}/reports/spend', { params: { path: { orgId }, query } }),
  ) as Promise<SpendReport>;
}
