import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export enum ToolErrorCode {
  UnknownTool = 'UNKNOWN_TOOL',
  /** The tool's upstream is disabled by an administrator: its tools are not served until it is enabled. */
  UpstreamDisabled = 'UPSTREAM_DISABLED',
  ToolNotAllowed = 'TOOL_NOT_ALLOWED',
  RateLimited = 'RATE_LIMITED',
  BudgetExceeded = 'BUDGET_EXCEEDED',
  UpstreamUnavailable = 'UPSTREAM_UNAVAILABLE',
  UpstreamTimeout = 'UPSTREAM_TIMEOUT',
  UpstreamCircuitOpen = 'UPSTREAM_CIRCUIT_OPEN',
  UpstreamError = 'UPSTREAM_ERROR',
  /** The upstream refused Tollgate's own credential (a static secret). */
  UpstreamUnauthorized = 'UPSTREAM_UNAUTHORIZED',
  /** The upstream acts as the user: they must connect (or reconnect) their account first. */
  AuthRequired = 'AUTH_REQUIRED',
  OutputBudgetExceeded = 'OUTPUT_BUDGET_EXCEEDED',
  /** The agent cancelled the call (notifications/cancelled); the upstream was cancelled too. */
  Cancelled = 'CANCELLED',
  InvalidRequest = 'INVALID_REQUEST',
  /** The call's arguments exceed a documented limit (depth, size, keys); refused before any work. */
  InvalidArguments = 'INVALID_ARGUMENTS',
  /** A 2025-11-25 task-augmented call (`params.task`) of a tool that lists no task support; answered -32601. */
  TaskNotSupported = 'TASK_NOT_SUPPORTED',
  SessionSchemaBudgetExceeded = 'SESSION_SCHEMA_BUDGET_EXCEEDED',
  InternalError = 'INTERNAL_ERROR',
  /** The upstream ran, but Redis did not acknowledge the call's settlement and usage event: result withheld, maybe executed. */
  UsageNotRecorded = 'USAGE_NOT_RECORDED',
  /** Redis lost its data: budget and rate-limit counters are being rebuilt; nothing is admitted meanwhile (retryable). */
  CountersUnavailable = 'COUNTERS_UNAVAILABLE',
  /** Code mode: the script does not parse, threw, or was cancelled. */
  ScriptError = 'SCRIPT_ERROR',
  /** Code mode: a sandbox limit (time, memory, tool calls, output) stopped the script. */
  ScriptLimitExceeded = 'SCRIPT_LIMIT_EXCEEDED',
  /** Code mode: the upstream tool itself answered `isError: true` to a script's call. */
  ToolFailed = 'TOOL_FAILED',
}

/** What an agent (and the model behind it) needs to understand a refusal and act on it. */
export interface ToolErrorBody {
  code: ToolErrorCode;
  message: string;
  hint: string;
  [detail: string]: unknown;
}

export const ERROR_META_KEY = 'tollgate/error';

/**
 * The JSON-RPC error code of a request Tollgate refused (policy, budget, output budget, upstream
 * down) where a tool result cannot say it: `resources/read` and `prompts/get` results have no
 * `isError`, and a 2025-11-25 task-augmented `tools/call` must answer a task. Its `data` is the
 * same structured body a refused tool call carries.
 */
export const TOLLGATE_REFUSAL_ERROR = -32003;

/**
 * A refused or failed call is a tool result, not a protocol error, so the model sees why: the
 * body is the text content (JSON) and, for programs, `_meta["tollgate/error"]`.
 */
export function toolErrorResult(body: ToolErrorBody, meta: Record<string, unknown> = {}): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(body) }],
    _meta: { ...meta, [ERROR_META_KEY]: body },
  };
}

/** The refusal or failure body a result carries (`undefined` for a result that is not one of ours). */
export function toolErrorOf(result: { _meta?: Record<string, unknown> }): ToolErrorBody | undefined {
  return result._meta?.[ERROR_META_KEY] as ToolErrorBody | undefined;
}
