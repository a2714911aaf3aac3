/** The lists an MCP client can be told have changed. */
export type ListKind = 'tools' | 'resources' | 'prompts';

export const LIST_CHANGED_METHODS: Record<ListKind, string> = {
  tools: 'notifications/tools/list_changed',
  resources: 'notifications/resources/list_changed',
  prompts: 'notifications/prompts/list_changed',
};

export const LIST_KINDS = Object.keys(LIST_CHANGED_METHODS) as ListKind[];
