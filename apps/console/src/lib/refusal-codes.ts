/** Refusal codes an agent sees in `_meta["tollgate/error"].code`, in words. */
export const REFUSAL_CODE_LABELS: Record<string, string> = {
  BUDGET_EXCEEDED: 'Budget exceeded',
  TOOL_NOT_ALLOWED: 'Tool not allowed',
  RATE_LIMITED: 'Rate limited',
  UNKNOWN_TOOL: 'Unknown tool',
  UPSTREAM_DISABLED: 'Upstream disabled',
  INVALID_ARGUMENTS: 'Invalid arguments',
  INVALID_REQUEST: 'Invalid request',
  AUTH_REQUIRED: 'Connection required',
  COUNTERS_UNAVAILABLE: 'Counters rebuilding',
  USAGE_NOT_RECORDED: 'Usage not recorded',
  OUTPUT_BUDGET_EXCEEDED: 'Output too large',
  TASK_NOT_SUPPORTED: 'Task not supported',
};

/** The code in words, with the code itself for anything this console does not know yet. */
export function refusalLabel(code: string): string {
  return REFUSAL_CODE_LABELS[code] ?? code;
}

export const OUTCOME_LABELS: Record<string, string> = {
  OK: 'Succeeded',
  TOOL_ERROR: 'Tool error',
  UPSTREAM_ERROR: 'Upstream error',
  REFUSED: 'Refused',
};
