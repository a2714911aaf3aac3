/** Admin API answers read by the budgets, upstreams-and-tools and prices pages. */
import type { components } from './admin-api.gen';

type Schemas = components['schemas'];

export type BudgetScope = 'ORG' | 'TEAM' | 'USER' | 'KEY';
export const BUDGET_PERIODS = ['DAY', 'WEEK', 'MONTH', 'QUARTER', 'TOTAL'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

/** GET /v1/orgs/:orgId/budgets: limits and thresholds, with the version to send as If-Match. */
export type Budget = Schemas['BudgetView'];

export type Upstream = Schemas['UpstreamView'];

export type ReviewStatus = 'APPROVED' | 'PENDING' | 'REJECTED';

/** GET /v1/orgs/:orgId/tools */
export type CatalogTool = Schemas['CatalogToolView'];

export type TextChange = Schemas['TextChangeView'];

/** GET /v1/orgs/:orgId/tools/:toolId/diff: the pinned definition against the latest, part by part. */
export type ToolDiff = Schemas['ToolDiffView'];

export type BulkReviewResult = Schemas['BulkReviewView'];

export type PriceRuleState = 'SCHEDULED' | 'IN_FORCE' | 'SUPERSEDED' | 'ENDED';

/** GET /v1/orgs/:orgId/prices/history */
export type PriceRule = Schemas['PriceRuleHistoryView'];
