import { microsToJson } from '@tollgate/kernel';
import { DisclosureTool } from './disclosure-tool';

/** How a key's agent is served its tools. CODE is resolved by the edge that builds code mode. */
export type RequestedDisclosureMode = 'FULL' | 'PROGRESSIVE' | 'CODE' | 'AUTO';

/** In AUTO mode, catalogs whose plain `tools/list` fits this many tokens are served in full. */
export const AUTO_FULL_MAX_TOKENS = 4_000;

/** Tool-list `_meta` key carrying a tool's price. */
export const PRICE_META_KEY = 'tollgate/price';

/** Policy levels from the most specific to the broadest. */
const SCOPE_ORDER = ['KEY', 'USER', 'TEAM', 'ORG'] as const;

/** What the mode resolution needs of one policy level. */
export interface DisclosurePolicyLevel {
  scope: (typeof SCOPE_ORDER)[number];
  disclosureMode: RequestedDisclosureMode | null;
  maxAnswerTokens?: number | null;
}

/** The mode asked for: the key's own, else the most specific policy's, else AUTO. */
export function requestedDisclosureMode(
  keyMode: RequestedDisclosureMode | null,
  levels: readonly DisclosurePolicyLevel[],
): RequestedDisclosureMode {
  if (keyMode) return keyMode;
  for (const scope of SCOPE_ORDER) {
    const mode = levels.find((l) => l.scope === scope)?.disclosureMode;
    if (mode) return mode;
  }
  return 'AUTO';
}

/** AUTO is FULL when the plain list is small enough, else PROGRESSIVE; other modes stand. */
export function resolveAutoMode(
  requested: RequestedDisclosureMode,
  plainListTokens: number,
  autoFullMaxTokens = AUTO_FULL_MAX_TOKENS,
): Exclude<RequestedDisclosureMode, 'AUTO'> {
  if (requested !== 'AUTO') return requested;
  return plainListTokens <= autoFullMaxTokens ? 'FULL' : 'PROGRESSIVE';
}

/** The policy ceiling on any one answer: the smallest `maxAnswerTokens` of the levels, if any. */
export function answerTokenCeiling(levels: readonly DisclosurePolicyLevel[]): number | undefined {
  const ceilings = levels.map((l) => l.maxAnswerTokens).filter((n): n is number => typeof n === 'number');
  return ceilings.length ? Math.min(...ceilings) : undefined;
}

/** A served catalog tool, as the catalog holds it (structural: this lib imports no other domain lib). */
export interface CatalogToolInput {
  exposedName: string;
  namespace: string;
  definition: { title?: string; description?: string; inputSchema: unknown; annotations?: unknown };
  category: string | null;
  taskSupport?: string | null;
  tier: 'HOT' | 'WARM' | 'STANDARD' | 'COLD';
  tierScore: number;
  schemaTokens: number;
}

/** The disclosure view of a catalog tool and its per-call price. */
export function disclosureToolOf(t: CatalogToolInput, perCallMicros: bigint | undefined): DisclosureTool {
  return {
    name: t.exposedName,
    namespace: t.namespace,
    title: t.definition.title,
    description: t.definition.description,
    inputSchema: t.definition.inputSchema as Record<string, unknown>,
    ...(t.definition.annotations ? { annotations: t.definition.annotations as Record<string, unknown> } : {}),
    ...(t.taskSupport ? { taskSupport: t.taskSupport } : {}),
    ...(t.category ? { category: t.category } : {}),
    ...(perCallMicros !== undefined ? { priceMicros: perCallMicros } : {}),
    tier: t.tier.toLowerCase() as DisclosureTool['tier'],
    tierScore: t.tierScore,
    schemaTokens: t.schemaTokens,
  };
}

/** The price a full-mode `tools/list` entry carries in `_meta`. */
export interface ListedPrice {
  perCallMicros: bigint;
  perOutputTokenMicros: bigint;
  acceptReportedCost: boolean;
  reportedCostCapMicros: bigint;
}

/** A full-mode `tools/list` entry: the pinned definition under its exposed name, with its price. */
export function listedToolEntry(
  definition: object,
  exposedName: string,
  price: ListedPrice | null,
): Record<string, unknown> {
  return {
    ...definition,
    name: exposedName,
    _meta: {
      [PRICE_META_KEY]: price
        ? {
            perCallMicros: microsToJson(price.perCallMicros),
            perOutputTokenMicros: microsToJson(price.perOutputTokenMicros),
            reportedCostCapMicros: price.acceptReportedCost ? microsToJson(price.reportedCostCapMicros) : 0,
          }
        : { perCallMicros: 0, perOutputTokenMicros: 0, reportedCostCapMicros: 0 },
    },
  };
}
