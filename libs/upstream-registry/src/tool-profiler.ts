import { exposedToolName } from '@tollgate/kernel';
import { TokenEncodingName } from '@tollgate/tokens';
import { ToolDefinition, schemaTokenCount } from './tool-definition';

/** Injection token for `ToolProfiler`; optional (the processes that sync or approve provide it). */
export const TOOL_PROFILER = Symbol('TOOL_PROFILER');

/** What a profile is computed from: the exposed name and the served definition. */
export interface ToolProfilerInput {
  /** `<namespace>__<tool>`. */
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  /** Tokens of the definition as a plain `tools/list` entry. */
  schemaTokens: number;
}

/** Per-tool disclosure data stored with the pinned definition. */
export interface ToolProfileColumns {
  summary: string;
  category: string;
  summaryTokens: number;
  stubTokens: number;
}

/**
 * Computes a tool's summary, category and tier token counts. The catalog stores them; how they
 * are computed belongs to progressive disclosure, which the app binds here (a domain lib does not
 * import another).
 */
export interface ToolProfiler {
  profile(input: ToolProfilerInput): ToolProfileColumns;
}

/**
 * Which definition the stored profile describes: the pinned one the edge serves, or the latest
 * while nothing is pinned yet. Profiles are recomputed only when this hash changes.
 */
export function profiledHash(tool: { pinnedHash: string | null; definitionHash: string }): string {
  return tool.pinnedHash ?? tool.definitionHash;
}

/** Schema tokens of a definition, plus its profile when a profiler is bound. */
export function profileColumns(
  def: ToolDefinition,
  namespace: string,
  encoding: TokenEncodingName,
  profiler: ToolProfiler | undefined,
): { schemaTokens: number } & Partial<ToolProfileColumns> {
  const schemaTokens = schemaTokenCount(def, encoding);
  if (!profiler) return { schemaTokens };
  const input: ToolProfilerInput = {
    name: exposedToolName({ namespace, tool: def.name }),
    inputSchema: def.inputSchema as Record<string, unknown>,
    schemaTokens,
  };
  if (def.title !== undefined) input.title = def.title;
  if (def.description !== undefined) input.description = def.description;
  return { schemaTokens, ...profiler.profile(input) };
}
