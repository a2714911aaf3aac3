import { describe, expect, it } from 'vitest';
import { flatCreatedTask, isCreatedTask, toSessionTask } from './task-wire';

const TASK = {
  taskId: 'up-1',
  status: 'working',
  ttl: 60_000,
  createdAt: '2026-11-26T15:00:00.000Z',
  lastUpdatedAt: '2026-11-26T15:00:00.000Z',
  pollInterval: 50,
};

describe('2025-11-25 task wire', () => {
  it('should read a 2025-11-25 CreateTaskResult as the extension’s created task, and write it back', () => {
    const flat = flatCreatedTask({ task: TASK, content: [] })!;
    expect(isCreatedTask(flat)).toBe(true);
    expect(flat).toMatchObject({ taskId: 'up-1', status: 'working', ttlMs: 60_000, pollIntervalMs: 50 });
    expect(toSessionTask(flat)).toEqual(TASK);
  });

  it('should not take a plain call result for a task', () => {
    expect(flatCreatedTask({ content: [{ type: 'text', text: 'task' }] })).toBeNull();
    expect(flatCreatedTask({ content: [], task: 'not a task' })).toBeNull();
  });

  it('should leave a 2025-11-25 Task nothing of the extension’s inlined result or error', () => {
    const detailed = { ...flatCreatedTask({ task: TASK })!, status: 'completed', result: { content: [] } };
    expect(toSessionTask(detailed)).toEqual({ ...TASK, status: 'completed' });
  });
});
