import { Tool, ToolAnnotationsSchema, ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/**
 * One page of `tools/list` as an upstream really sends it. The SDK's own result schema rejects the
 * whole page for one sloppy field (a `null` hint, a `null` description), so the sync reads the page
 * loosely and checks each tool itself with `normalizeListedTool`.
 */
export const LENIENT_TOOLS_PAGE = z
  .object({ tools: z.array(z.unknown()), nextCursor: z.unknown().optional() })
  .passthrough();

export interface NormalizedListedTool {
  /** The tool with every invalid optional field dropped; null when it cannot be served at all. */
  tool: Tool | null;
  /** What was dropped and why, one line each, naming the tool and the field. */
  warnings: string[];
}

type FieldSchema = { safeParse(value: unknown): { success: boolean } };

// Optional fields of a tool, checked one by one with the SDK's own schemas; unknown fields are ignored.
const OPTIONAL_FIELDS = Object.entries(ToolSchema.shape).filter(
  ([k]) => k !== 'name' && k !== 'inputSchema' && k !== 'annotations',
) as [string, FieldSchema][];
const ANNOTATION_FIELDS = Object.entries(ToolAnnotationsSchema.shape) as [string, FieldSchema][];

/**
 * Makes one listed tool spec-valid the way a lenient client would: a field that fails its schema
 * is dropped (with a warning) and the tool kept. A tool without a usable name or input schema is
 * dropped, since the edge could neither route to it nor check its arguments.
 */
export function normalizeListedTool(raw: unknown, index: number): NormalizedListedTool {
  if (!isRecord(raw)) return { tool: null, warnings: [`tools[${index}] is ${shown(raw)}, not a tool: dropped`] };
  if (typeof raw.name !== 'string' || raw.name.length === 0) {
    return { tool: null, warnings: [`tools[${index}] has name ${shown(raw.name)}: tool dropped`] };
  }
  const label = `tool ${raw.name}`;
  const warnings: string[] = [];
  const tool: Record<string, unknown> = { name: raw.name };

  if (raw.inputSchema === undefined || raw.inputSchema === null) {
    warnings.push(`${label}: inputSchema is ${shown(raw.inputSchema)}; served as {"type":"object"}`);
    tool.inputSchema = { type: 'object' };
  } else if (ToolSchema.shape.inputSchema.safeParse(raw.inputSchema).success) {
    tool.inputSchema = raw.inputSchema;
  } else {
    return { tool: null, warnings: [`${label}: inputSchema is not a JSON Schema of type "object": tool dropped`] };
  }

  for (const [field, schema] of OPTIONAL_FIELDS) {
    const value = raw[field];
    if (value === undefined) continue;
    if (schema.safeParse(value).success) tool[field] = value;
    else warnings.push(`${label}: ${field} is ${shown(value)}: field dropped`);
  }

  if (raw.annotations !== undefined) {
    if (!isRecord(raw.annotations)) {
      warnings.push(`${label}: annotations is ${shown(raw.annotations)}: field dropped`);
    } else {
      const annotations: Record<string, unknown> = {};
      for (const [field, schema] of ANNOTATION_FIELDS) {
        const value = raw.annotations[field];
        if (value === undefined) continue;
        if (schema.safeParse(value).success) annotations[field] = value;
        else warnings.push(`${label}: annotations.${field} is ${shown(value)}: field dropped`);
      }
      tool.annotations = annotations;
    }
  }

  // The field checks above should make this hold; a tool the SDK would still refuse is not served.
  const parsed = ToolSchema.safeParse(tool);
  if (!parsed.success)
    return { tool: null, warnings: [...warnings, `${label}: still invalid after dropping fields: tool dropped`] };
  return { tool: tool as Tool, warnings };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A short, log-safe rendering of an offending value (its type and a few characters). */
function shown(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${String(v).slice(0, 40)}`;
}
