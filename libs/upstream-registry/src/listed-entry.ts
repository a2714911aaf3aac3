import { PromptSchema, ResourceSchema, ResourceTemplateSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { sha256Hex, stableStringify } from '@tollgate/kernel';

export type CatalogEntryKind = 'RESOURCE' | 'RESOURCE_TEMPLATE' | 'PROMPT';

/** How each kind is listed, keyed and checked: its list method, result field and identifying field. */
export const ENTRY_LISTINGS: Record<
  CatalogEntryKind,
  { method: string; field: string; keyField: string; capability: 'resources' | 'prompts' }
> = {
  RESOURCE: { method: 'resources/list', field: 'resources', keyField: 'uri', capability: 'resources' },
  RESOURCE_TEMPLATE: {
    method: 'resources/templates/list',
    field: 'resourceTemplates',
    keyField: 'uriTemplate',
    capability: 'resources',
  },
  PROMPT: { method: 'prompts/list', field: 'prompts', keyField: 'name', capability: 'prompts' },
};

/** One page of a list as an upstream sends it; entries are checked one by one. */
export const LENIENT_LIST_PAGE = z.object({ nextCursor: z.unknown().optional() }).passthrough();

/** A resource, template or prompt as the catalog pins it (its definition as listed, invalid fields dropped). */
export interface ListedEntry {
  kind: CatalogEntryKind;
  /** The resource's URI, the template's URI template, or the prompt's name. */
  key: string;
  definition: Record<string, unknown>;
}

type FieldSchema = { safeParse(value: unknown): { success: boolean } };
const SCHEMAS = { RESOURCE: ResourceSchema, RESOURCE_TEMPLATE: ResourceTemplateSchema, PROMPT: PromptSchema };
// `_meta` is per-listing noise, not part of the contract an admin reviews.
const FIELDS = Object.fromEntries(
  Object.entries(SCHEMAS).map(([kind, schema]) => [
    kind,
    Object.entries(schema.shape).filter(([k]) => k !== '_meta') as [string, FieldSchema][],
  ]),
) as Record<CatalogEntryKind, [string, FieldSchema][]>;

/**
 * Makes one listed entry spec-valid the way the tool sync does: an invalid optional field is
 * dropped (with a warning), an entry without its key or name is dropped.
 */
export function normalizeListedEntry(
  kind: CatalogEntryKind,
  raw: unknown,
  index: number,
): { entry: ListedEntry | null; warnings: string[] } {
  const { field, keyField } = ENTRY_LISTINGS[kind];
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { entry: null, warnings: [`${field}[${index}] is not an object: dropped`] };
  const rec = raw as Record<string, unknown>;
  const key = rec[keyField];
  if (typeof key !== 'string' || key.length === 0 || key.length > 2048)
    return { entry: null, warnings: [`${field}[${index}] has no usable ${keyField}: dropped`] };
  if (typeof rec.name !== 'string' || rec.name.length === 0)
    return { entry: null, warnings: [`${field}[${index}] (${key.slice(0, 80)}) has no name: dropped`] };
  const warnings: string[] = [];
  const definition: Record<string, unknown> = {};
  for (const [name, schema] of FIELDS[kind]) {
    const value = rec[name];
    if (value === undefined) continue;
    if (schema.safeParse(value).success) definition[name] = value;
    else warnings.push(`${field} ${key.slice(0, 80)}: ${name} is invalid: field dropped`);
  }
  return { entry: { kind, key, definition }, warnings };
}

/** Hash of the canonical JSON of an entry's definition. */
export function entryHash(definition: Record<string, unknown>): string {
  return sha256Hex(stableStringify(definition));
}
