import { countJsonTokens } from '@tollgate/tokens';
import { CODE_MODE_TOOL_DEFINITIONS } from './code-mode-tools';
import { DEFAULT_DISCLOSURE_BUDGETS, DisclosureCatalog, DisclosureScope } from './disclosure-catalog';
import { META_NAMESPACE, META_TOOL_DEFINITIONS, META_TOOL_NAMES } from './meta-tools';

/** Reads on in a result that was paged because it was over the output cap; listed in every mode. */
export const READ_RESULT_PAGE_TOOL = `${META_NAMESPACE}__read_result_page`;

export const READ_RESULT_PAGE_DEFINITION = {
  name: READ_RESULT_PAGE_TOOL,
  description:
    'Read the next page of a tool result that was too large for one answer (free: the call was already charged).',
  inputSchema: {
    type: 'object' as const,
    properties: { handle: { type: 'string' }, cursor: { type: 'string', description: 'From the previous page' } },
    required: ['handle', 'cursor'],
  },
};

/** Code mode's list: the file-tree and script tools plus search. */
export const CODE_MODE_TOOL_LIST = [
  ...CODE_MODE_TOOL_DEFINITIONS,
  ...META_TOOL_DEFINITIONS.filter((d) => d.name === META_TOOL_NAMES.searchTools),
];

export interface AgentToolList {
  tools: Record<string, unknown>[];
  tokens: number;
  /** The hot tools of a progressive list. */
  hot: string[];
}

function withPager(tools: object[], hot: string[]): AgentToolList {
  const all = [...tools, READ_RESULT_PAGE_DEFINITION] as Record<string, unknown>[];
  return { tools: all, tokens: countJsonTokens({ tools: all }), hot };
}

/** Code mode's `tools/list`. */
export function codeModeAgentToolList(): AgentToolList {
  return withPager(CODE_MODE_TOOL_LIST, []);
}

/**
 * What an agent's `tools/list` holds, as the edge sends it and the admin preview shows it: FULL
 * the given entries, PROGRESSIVE the hot list and meta-tools within the initial budget (or the
 * policy ceiling); both with `read_result_page` (see codeModeAgentToolList for CODE).
 */
export function agentToolList(
  mode: 'FULL' | 'PROGRESSIVE',
  input: { catalog: DisclosureCatalog; scope: DisclosureScope; fullEntries: () => Record<string, unknown>[] },
): AgentToolList {
  if (mode === 'FULL') return withPager(input.fullEntries(), []);
  const budget =
    (input.scope.maxTokensCeiling ?? DEFAULT_DISCLOSURE_BUDGETS.initial) - countJsonTokens(READ_RESULT_PAGE_DEFINITION);
  const initial = input.catalog.initialToolList(input.scope, budget);
  return withPager(initial.tools, initial.hot);
}
