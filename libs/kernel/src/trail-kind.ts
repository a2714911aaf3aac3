/** What an organisation keeps of its agents' trails (see DEFAULT_TRAIL_MODE in `@tollgate/usage`). */
export const TRAIL_MODES = ['OFF', 'METADATA', 'FULL'] as const;
export type TrailMode = (typeof TRAIL_MODES)[number];

/** The kinds of step a trail holds: answers the agent read, then what it did. */
export const TRAIL_KINDS = [
  'TOOLS_LIST',
  'CATEGORIES',
  'SEARCH',
  'SCHEMAS',
  'FILES_LIST',
  'FILES_READ',
  'DOCS_READ',
  'RESOURCES_LIST',
  'PROMPTS_LIST',
  'RESULT_PAGE',
  'CALL',
  'SCRIPT',
  'RESOURCE_READ',
  'PROMPT_GET',
] as const;
export type TrailKind = (typeof TRAIL_KINDS)[number];

/** Steps that disclose the catalog to the agent (what it read before acting). */
export const DISCOVERY_TRAIL_KINDS: readonly TrailKind[] = [
  'TOOLS_LIST',
  'CATEGORIES',
  'SEARCH',
  'SCHEMAS',
  'FILES_LIST',
  'FILES_READ',
  'DOCS_READ',
  'RESOURCES_LIST',
  'PROMPTS_LIST',
];
