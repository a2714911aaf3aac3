import type { components } from './admin-api.gen';

/** GET …/calls, as the served OpenAPI describes it (docs/admin-api.md). */
type Schemas = components['schemas'];

export type CallLogRow = Schemas['CallLogRowView'];

/** GET …/trail: what agents were shown and did (docs/disclosure.md, "Reading an agent's trail"). */
export type TrailPage = Schemas['TrailPageView'];
export type TrailStep = Schemas['TrailStepView'];
export type TrailKind = TrailStep['kind'];
