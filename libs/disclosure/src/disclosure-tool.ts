/** Tier assigned by the tier-score job; `hot` tools are candidates for the initial list (T0). */
export type ToolTier = 'hot' | 'warm' | 'standard' | 'cold';

/** A JSON Schema object as MCP tools carry it (`inputSchema`). */
export type JsonSchema = Record<string, unknown>;

/**
 * What the disclosure lib needs to know about one served tool. The catalog maps its own
 * definitions to this shape, so this domain lib depends on no other domain lib.
 */
export interface DisclosureTool {
  /** Exposed name, `<namespace>__<tool>`; unique in a catalog. */
  name: string;
  /** The upstream's namespace (the server the agent sees). */
  namespace: string;
  title?: string;
  description?: string;
  inputSchema: JsonSchema;
  annotations?: Record<string, unknown>;
  /** `execution.taskSupport` as the upstream declared it, if it did. */
  taskSupport?: string;
  /** Category given by the upstream's registration; guessed from keywords when absent. */
  category?: string;
  /** The upstream server's own description, indexed for search. */
  serverDescription?: string;
  /** Price of one call in micro-units of the organisation's currency. */
  priceMicros?: bigint;
  tier?: ToolTier;
  /** Higher is hotter; orders the hot list. */
  tierScore?: number;
  /** Tokens of the tool as a `tools/list` entry, when the catalog cached it at sync time. */
  schemaTokens?: number;
}

/** The definition a plain `tools/list` (and a T3 schema answer) carries for a tool. */
export interface ServedToolDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonSchema;
  annotations?: Record<string, unknown>;
  execution?: { taskSupport: string };
}

export function servedDefinition(tool: DisclosureTool): ServedToolDefinition {
  // Key order as MCP servers send it, so the token count matches a plain `tools/list`.
  const def: Partial<ServedToolDefinition> = { name: tool.name };
  if (tool.title !== undefined) def.title = tool.title;
  if (tool.description !== undefined) def.description = tool.description;
  def.inputSchema = tool.inputSchema;
  if (tool.annotations !== undefined) def.annotations = tool.annotations;
  if (tool.taskSupport !== undefined) def.execution = { taskSupport: tool.taskSupport };
  return def as ServedToolDefinition;
}

/** Plain code-unit order: the same on every machine, unlike `localeCompare`. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
