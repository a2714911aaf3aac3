/** Admin API answers read by the budgets, upstreams-and-tools and prices pages. */

export type BudgetScope = 'ORG' | 'TEAM' | 'USER' | 'KEY';
export const BUDGET_PERIODS = ['DAY', 'WEEK', 'MONTH', 'QUARTER', 'TOTAL'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

/** GET /v1/orgs/:orgId/budgets: limits and thresholds, with the version to send as If-Match. */
export interface Budget {
  id: string;
  scope: BudgetScope;
  scopeId: string;
  period: BudgetPeriod;
  limitMicros: number | string;
  mode: 'HARD' | 'SOFT';
  alertThresholds: number[];
  version: number;
  updatedAt: string;
}

export interface Upstream {
  id: string;
  namespace: string;
  displayName: string | null;
  transport: string;
  url: string | null;
  command: string | null;
  enabled: boolean;
  syncPaused: boolean;
  autoApproveTools: boolean | null;
  syncIntervalSeconds: number;
  version: number;
  lastSyncAt: string | null;
  lastSyncError: string | null;
  lastSyncWarnings: string[];
}

export type ReviewStatus = 'APPROVED' | 'PENDING' | 'REJECTED';

/** GET /v1/orgs/:orgId/tools */
export interface CatalogTool {
  id: string;
  upstreamId: string;
  namespace: string;
  name: string;
  exposedName: string;
  definitionHash: string;
  pinnedHash: string | null;
  reviewStatus: ReviewStatus;
  description: string | null;
  schemaTokens: number;
  summaryTokens: number;
  stubTokens: number;
  tier: 'HOT' | 'WARM' | 'STANDARD' | 'COLD';
  tierScore: number;
  removedAt: string | null;
}

export interface TextChange {
  before: string | null;
  after: string | null;
}

/** GET /v1/orgs/:orgId/tools/:toolId/diff: the pinned definition against the latest, part by part. */
export interface ToolDiff {
  tool: CatalogTool;
  pinnedHash: string | null;
  definitionHash: string;
  changed: boolean;
  title: TextChange | null;
  description: TextChange | null;
  inputSchema: {
    added: string[];
    removed: string[];
    changed: { name: string; before: unknown; after: unknown }[];
    required: { before: string[]; after: string[] } | null;
  };
  otherChanges: string[];
  latestSchemaTokens: number;
}

export interface BulkReviewResult {
  applied: number;
  stale: number;
  notFound: number;
  results: {
    toolId: string;
    decision: string;
    result: 'APPLIED' | 'STALE' | 'NOT_FOUND';
    definitionHash: string | null;
    pinnedHash: string | null;
    message: string | null;
  }[];
}

export type PriceRuleState = 'SCHEDULED' | 'IN_FORCE' | 'SUPERSEDED' | 'ENDED';

/** GET /v1/orgs/:orgId/prices/history */
export interface PriceRule {
  id: string;
  upstreamId: string | null;
  toolPattern: string;
  perCallMicros: number | string;
  perOutputTokenMicros: number | string;
  acceptReportedCost: boolean;
  reportedCostCapMicros: number | string;
  chargeFailedCalls: boolean;
  effectiveFrom: string;
  effectiveUntil: string | null;
  createdAt: string;
  state: PriceRuleState;
}
