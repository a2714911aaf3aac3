import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { sha256Hex, stableStringify } from '@tollgate/kernel';
import { TokenEncodingName, countTokens } from '@tollgate/tokens';

/** The parts of an upstream tool that Tollgate serves and pins; anything else is dropped. */
export interface ToolDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Tool['inputSchema'];
  outputSchema?: Tool['outputSchema'];
  annotations?: Tool['annotations'];
}

export function normalizeToolDefinition(tool: Tool): ToolDefinition {
  const def: ToolDefinition = { name: tool.name, inputSchema: tool.inputSchema ?? { type: 'object' } };
  if (tool.title !== undefined) def.title = tool.title;
  if (tool.description !== undefined) def.description = tool.description;
  if (tool.outputSchema !== undefined) def.outputSchema = tool.outputSchema;
  if (tool.annotations !== undefined) def.annotations = tool.annotations;
  return def;
}

/**
 * The tool's `execution.taskSupport` as listed (null: not declared). Kept beside the definition,
 * not in it: whether a tool may run as a task changes no argument or result, so it needs no review.
 */
export function taskSupportOf(tool: Tool): TaskSupport | null {
  const support = (tool as { execution?: { taskSupport?: unknown } }).execution?.taskSupport;
  return support === 'forbidden' || support === 'optional' || support === 'required' ? support : null;
}

export type TaskSupport = 'forbidden' | 'optional' | 'required';

/** Hash of the canonical JSON: equal definitions hash equally whatever the key order. */
export function definitionHash(def: ToolDefinition): string {
  return sha256Hex(stableStringify(def));
}

/** Tokens the tool costs as an entry of a plain `tools/list` (compact JSON). */
export function schemaTokenCount(def: ToolDefinition, encoding: TokenEncodingName): number {
  return countTokens(JSON.stringify(def), encoding);
}
