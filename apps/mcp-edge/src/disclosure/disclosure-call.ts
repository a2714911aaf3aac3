import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { DisclosureException } from '@tollgate/disclosure';
import { ToolErrorCode, toolErrorResult } from '../governed-call/tool-error';

/**
 * What the discovery tools (the meta-tools and code mode's search and docs) share: reading their
 * optional arguments and answering a refused request (a bad or stale cursor) as a tool error.
 */

export function optString(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

export function optInt(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
}

export function disclosureErrorResult(err: DisclosureException, tool: string): CallToolResult {
  return toolErrorResult({
    code: ToolErrorCode.InvalidRequest,
    message: err.message,
    hint: 'Check the arguments; start again without a cursor if it is stale.',
    tool,
    reason: err.code,
    ...(err.details ?? {}),
  });
}
