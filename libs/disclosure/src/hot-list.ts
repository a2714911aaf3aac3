import { compareNames } from './disclosure-tool';

export interface HotListCandidate {
  name: string;
  /** Higher is hotter; tools without a positive score are never hot. */
  tierScore?: number;
  /** Tokens of the tool's full definition. */
  schemaTokens: number;
}

export interface HotList<T> {
  tools: T[];
  /** Sum of the chosen tools' schema tokens (one separator each included). */
  tokens: number;
}

/**
 * The T0 tools: highest tier score first (ties by name), each taken if its schema still fits in
 * `maxTokens`; a tool too large for what is left is passed over, not the end of the list.
 */
export function pickHotList<T extends HotListCandidate>(candidates: readonly T[], maxTokens: number): HotList<T> {
  const ranked = candidates
    .filter((tool) => (tool.tierScore ?? 0) > 0)
    .sort((a, b) => (b.tierScore ?? 0) - (a.tierScore ?? 0) || compareNames(a.name, b.name));
  const tools: T[] = [];
  let tokens = 0;
  for (const tool of ranked) {
    const cost = tool.schemaTokens + 1;
    if (tokens + cost > maxTokens) continue;
    tools.push(tool);
    tokens += cost;
  }
  return { tools, tokens };
}
