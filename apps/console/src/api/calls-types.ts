import type { components } from './admin-api.gen';

/** GET …/calls and GET …/reports/refusals(/blocking), as the served OpenAPI describes them (docs/admin-api.md). */
type Schemas = components['schemas'];

export type CallLogPage = Schemas['CallLogPageView'];
export type CallLogRow = Schemas['CallLogRowView'];
export type CallOutcome = CallLogRow['outcome'];
export type RefusalRow = Schemas['RefusalRowView'];
export type RefusalReport = Schemas['RefusalReportView'];
export type BlockingBudgets = Schemas['BlockingBudgetsView'];

/** GET …/trail: what agents were shown and did (docs/disclosure.md, "Reading an agent's trail"). */
export type TrailPage = Schemas['TrailPageView'];
export type TrailStep = Schemas['TrailStepView'];
export type TrailKind = TrailStep['kind'];
