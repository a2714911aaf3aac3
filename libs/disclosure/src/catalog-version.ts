import { sha256Hex, stableStringify } from '@tollgate/kernel';
import { DisclosureTool } from './disclosure-tool';

/**
 * The version of a disclosure catalog: the first 16 hex digits of the SHA-256 of its tools as the
 * renderer receives them (definitions, prices, tiers, categories), in name order. Every list,
 * search, schema and stub answer is a function of these tools and the request, so two edges with
 * the same version render the same bytes, and an operator reading a trail can name the catalog an
 * agent saw. Computed once per built catalog.
 */
export function disclosureCatalogVersion(tools: readonly DisclosureTool[]): string {
  const sorted = [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return sha256Hex(stableStringify(sorted.map((t) => ({ ...t, priceMicros: t.priceMicros?.toString() })))).slice(0, 16);
}
