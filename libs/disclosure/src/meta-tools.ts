import { ServedToolDefinition } from './disclosure-tool';

/** Namespace of the gateway's own tools; no upstream may take it. */
export const META_NAMESPACE = 'tollgate';

export const META_TOOL_NAMES = {
  listCategories: `${META_NAMESPACE}__list_categories`,
  searchTools: `${META_NAMESPACE}__search_tools`,
  getToolSchemas: `${META_NAMESPACE}__get_tool_schemas`,
  callTool: `${META_NAMESPACE}__call_tool`,
} as const;

const MAX_TOKENS = { type: 'integer', minimum: 50, description: 'Answer budget in tokens' };
const CURSOR = { type: 'string', description: 'From the previous answer, for the next page' };

/**
 * The progressive mode's meta-tools (T1 categories, T2 search, T3 schemas, and the governed
 * call). Kept terse: they sit in every session's initial context.
 */
export const META_TOOL_DEFINITIONS: readonly ServedToolDefinition[] = [
  {
    name: META_TOOL_NAMES.searchTools,
    description:
      'Find tools by what you want to do. Returns name, one-line summary, parameters, schema size (schemaTokens), price and tier, best match first.',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'Plain words, e.g. "create a pie chart"' },
        category: { type: 'string' },
        server: { type: 'string' },
        limit: { type: 'integer', minimum: 1, maximum: 50 },
        maxTokens: MAX_TOKENS,
        cursor: CURSOR,
      },
      required: ['query'],
    },
  },
  {
    name: META_TOOL_NAMES.getToolSchemas,
    description: 'Full input schemas of tools by name, to call them.',
    inputSchema: {
      type: 'object',
      properties: {
        names: { type: 'array', items: { type: 'string' }, minItems: 1 },
        maxTokens: MAX_TOKENS,
        cursor: CURSOR,
      },
      required: ['names'],
    },
  },
  {
    name: META_TOOL_NAMES.callTool,
    description: 'Call any allowed tool by name with its arguments.',
    inputSchema: {
      type: 'object',
      properties: { name: { type: 'string' }, arguments: { type: 'object' } },
      required: ['name'],
    },
  },
  {
    name: META_TOOL_NAMES.listCategories,
    description: 'Tool categories with their servers and tool counts.',
    inputSchema: { type: 'object', properties: { maxTokens: MAX_TOKENS, cursor: CURSOR } },
  },
];
