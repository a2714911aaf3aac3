/** Admin API answers read by the budgets, upstreams-and-tools and prices pages (from admin-api.gen.ts). */
import type { components } from './admin-api.gen';

type Schemas = components['schemas'];

/** GET /v1/orgs/:orgId/budgets: limits and thresholds, with the version to send as If-Match. */
export type Budget = Schemas['BudgetView'];

export type BudgetScope = Budget['scope'];
export type BudgetPeriod = Budget['period'];
/** Every period, shortest first, as the forms offer them (checked against the OpenAPI's list). */
export const BUDGET_PERIODS = ['DAY', 'WEEK', 'MONTH', 'QUARTER', 'TOTAL'] as const satisfies readonly BudgetPeriod[];

export type Upstream = Schemas['UpstreamView'];

/** GET /v1/orgs/:orgId/tools */
export type CatalogTool = Schemas['CatalogToolView'];

/** GET /v1/orgs/:orgId/tools/:toolId/diff: the pinned definition against the latest, part by part. */
export type ToolDiff = Schemas['ToolDiffView'];

export type BulkReviewResult = Schemas['BulkReviewView'];

/** GET /v1/orgs/:orgId/prices/history */
export type PriceRule = Schemas['PriceRuleHistoryView'];
