/**
 * The tasks extension's wire (`io.modelcontextprotocol/tasks`, SEP-2663, MCP 2026-07-28): a
 * server-directed task answers `tools/call` with a flat CreateTaskResult (`resultType: "task"`),
 * `tasks/get` answers a DetailedTask (the result, error or pending input requests inlined),
 * `tasks/update` and `tasks/cancel` answer an empty ack.
 */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
export const TERMINAL_TASK_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

/** The methods a client polls and steers a task with. */
export const TASK_METHODS: ReadonlySet<string> = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);

/** A CreateTaskResult as an upstream answers it (less `resultType`, which the client keeps). */
export interface CreatedTask {
  taskId: string;
  status: TaskStatus;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
}

/** Whether a tools/call answer is a CreateTaskResult (the upstream runs the call as a task). */
export function isCreatedTask(result: Record<string, unknown>): boolean {
  return result.resultType === 'task' && typeof result.taskId === 'string';
}

/** Whether a client's capabilities declare the tasks extension. */
export function declaresTasks(capabilities: Record<string, unknown> | undefined): boolean {
  const extensions = capabilities?.extensions;
  return typeof extensions === 'object' && extensions !== null && TASKS_EXTENSION in extensions;
}

/** Whether a tool's definition says it may run as a task (`execution.taskSupport` optional or required). */
export function supportsTasks(definition: object): boolean {
  const support = ((definition as { execution?: unknown }).execution as { taskSupport?: unknown } | undefined)
    ?.taskSupport;
  return support === 'optional' || support === 'required';
}

/** What a client that did not declare the extension gets for `tasks/*` (-32021's `data`). */
export const TASKS_REQUIRED_CAPABILITIES = { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } };
