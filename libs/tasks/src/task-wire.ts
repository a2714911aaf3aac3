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

/**
 * The 2025-11-25 revision's tasks (experimental there): the client augments `tools/call` with
 * `params.task: { ttl }`, the server answers `{ task: Task }`, and `tasks/get` answers the Task
 * alone (`ttl`, `pollInterval`; the result comes from `tasks/result`). The edge keeps one shape
 * inside (the extension's, above) and adapts the wire at both ends.
 */
export const SESSION_TASK_METHODS: ReadonlySet<string> = new Set(['tasks/get', 'tasks/result', 'tasks/cancel']);

/** A 2025-11-25 CreateTaskResult (`{ task }`) in the extension's flat shape, or null if it is none. */
export function flatCreatedTask(result: Record<string, unknown>): Record<string, unknown> | null {
  const task = result.task as Record<string, unknown> | undefined;
  if (typeof task !== 'object' || task === null || typeof task.taskId !== 'string') return null;
  return fromSessionTask(task, { resultType: 'task', ...(result._meta ? { _meta: result._meta } : {}) });
}

/** A 2025-11-25 Task (`ttl`, `pollInterval`) in the extension's field names. */
export function fromSessionTask(
  task: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const { ttl, pollInterval, ...rest } = task;
  return {
    ...rest,
    ...extra,
    ttlMs: typeof ttl === 'number' ? ttl : null,
    ...(typeof pollInterval === 'number' ? { pollIntervalMs: pollInterval } : {}),
  };
}

/** The extension's task (flat CreateTaskResult or DetailedTask) as a 2025-11-25 Task, nothing inlined. */
export function toSessionTask(task: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {
    taskId: task.taskId,
    status: task.status,
    ttl: typeof task.ttlMs === 'number' ? task.ttlMs : null,
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt ?? task.createdAt,
  };
  if (typeof task.pollIntervalMs === 'number') out.pollInterval = task.pollIntervalMs;
  if (typeof task.statusMessage === 'string') out.statusMessage = task.statusMessage;
  return out;
}
