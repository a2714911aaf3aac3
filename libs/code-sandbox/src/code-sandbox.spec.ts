import { describe, expect, it } from 'vitest';
import { CodeSandbox, SandboxToolAnswer, SandboxToolCall, ScriptErrorKind, TOOL_CALL_LIMIT_CODE } from './code-sandbox';
import { SandboxLimitKind } from './sandbox-limits';

const sandbox = new CodeSandbox();

/** A host with two tools: `math__add` sums, `math__fail` answers a structured error. */
function host(calls: SandboxToolCall[] = []) {
  return async (call: SandboxToolCall): Promise<SandboxToolAnswer> => {
    calls.push(call);
    if (call.tool === 'math__add') return { ok: true, value: { sum: Number(call.args.a) + Number(call.args.b) } };
    if (call.tool === 'math__slow') return new Promise(() => undefined);
    return {
      ok: false,
      error: {
        code: 'TOOL_NOT_ALLOWED',
        message: `Calling "${call.tool}" is not allowed for this key.`,
        hint: 'Ask an administrator.',
      },
    };
  };
}

const TOOLS = [
  { tool: 'math__add', namespace: 'math', method: 'add' },
  { tool: 'math__fail', namespace: 'math', method: 'fail' },
];

describe('CodeSandbox', () => {
  it('should return the value of a script that calls tools and logs', async () => {
    const calls: SandboxToolCall[] = [];
    const result = await sandbox.run({
      code: `const a = await math.add({ a: 1, b: 2 });\nconsole.log('first', a);\nconst b = await callTool('math__add', { a: a.sum, b: 10 });\nreturn { total: b.sum };`,
      tools: TOOLS,
      callTool: host(calls),
    });
    expect(result).toMatchObject({ ok: true, value: { total: 13 }, logs: ['first {"sum":3}'], toolCalls: 2 });
    expect(calls.map((c) => [c.tool, c.line])).toEqual([
      ['math__add', 1],
      ['math__add', 3],
    ]);
  });

  it('should run tool calls in parallel when the script awaits them together', async () => {
    const result = await sandbox.run({
      code: `const r = await Promise.all([1, 2, 3].map((n) => math.add({ a: n, b: n })));\nreturn r.map((x) => x.sum);`,
      tools: TOOLS,
      callTool: host(),
    });
    expect(result.value).toEqual([2, 4, 6]);
  });

  it('should say which line, tool, arguments and answer when a tool call fails uncaught', async () => {
    const result = await sandbox.run({
      code: `const x = 1;\n\nawait math.fail({ id: 7 });\nreturn x;`,
      tools: TOOLS,
      callTool: host(),
    });
    expect(result.ok).toBe(false);
    expect(result.error).toMatchObject({
      kind: ScriptErrorKind.Tool,
      code: 'TOOL_NOT_ALLOWED',
      tool: 'math__fail',
      args: { id: 7 },
      line: 3,
      answer: { code: 'TOOL_NOT_ALLOWED', hint: 'Ask an administrator.' },
    });
    expect(result.error?.message).toContain('math__fail (line 3) failed with TOOL_NOT_ALLOWED');
  });

  it('should let a script catch a tool error and read its code and answer', async () => {
    const result = await sandbox.run({
      code: `try { await math.fail({}); } catch (e) { return { code: e.code, tool: e.tool, hint: e.answer.hint, isToolError: e instanceof ToolError }; }`,
      tools: TOOLS,
      callTool: host(),
    });
    expect(result.value).toEqual({
      code: 'TOOL_NOT_ALLOWED',
      tool: 'math__fail',
      hint: 'Ask an administrator.',
      isToolError: true,
    });
  });

  it('should report the line of an error the script throws when it throws', async () => {
    const result = await sandbox.run({ code: `const a = 1;\nconst b = null;\nreturn b.field;`, callTool: host() });
    expect(result.error).toMatchObject({ kind: ScriptErrorKind.Runtime, name: 'TypeError', line: 3 });
    expect(result.error?.message).toMatch(/^TypeError at line 3: /);
  });

  it('should report the line of a syntax error when the script does not parse', async () => {
    const result = await sandbox.run({ code: `const a = 1;\nconst b = ;\nreturn a;`, callTool: host() });
    expect(result.error).toMatchObject({ kind: ScriptErrorKind.Syntax, name: 'SyntaxError', line: 2 });
  });

  it('should stop an infinite loop when the time limit passes', async () => {
    const started = Date.now();
    const result = await sandbox.run({
      code: `let i = 0;\nwhile (true) { i++; }`,
      callTool: host(),
      limits: { wallTimeMs: 300 },
    });
    expect(result.error).toMatchObject({ kind: ScriptErrorKind.Limit, limit: SandboxLimitKind.Time });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('should stop a script that waits forever on a tool when the time limit passes', async () => {
    const result = await sandbox.run({
      code: `await callTool('math__slow', {});`,
      callTool: host(),
      limits: { wallTimeMs: 200 },
    });
    expect(result.error).toMatchObject({ kind: ScriptErrorKind.Limit, limit: SandboxLimitKind.Time });
  });

  it('should not let a script catch the time limit when it wraps the loop in try/catch', async () => {
    const result = await sandbox.run({
      code: `for (;;) { try { while (true) {} } catch (e) { console.log('caught', e.message); } }`,
      callTool: host(),
      limits: { wallTimeMs: 200 },
    });
    expect(result.error).toMatchObject({ kind: ScriptErrorKind.Limit, limit: SandboxLimitKind.Time });
  });

  it('should stop a memory bomb when the memory limit is reached', async () => {
    const result = await sandbox.run({
      code: `const hoard = [];\nwhile (true) hoard.push({ n: hoard.length, pad: [1, 2, 3, 4] });`,
      callTool: host(),
      limits: { memoryBytes: 8 * 1024 * 1024, wallTimeMs: 5_000 },
    });
    expect(result.error).toMatchObject({ kind: ScriptErrorKind.Limit, limit: SandboxLimitKind.Memory });
    expect(result.durationMs).toBeLessThan(5_000);
  });

  it('should stop runaway recursion with a stack overflow instead of crashing', async () => {
    const result = await sandbox.run({
      code: `function f(n) { return f(n + 1) + 1; }\nreturn f(0);`,
      callTool: host(),
    });
    expect(result.error).toMatchObject({ kind: ScriptErrorKind.Limit, limit: SandboxLimitKind.Memory });
  });

  it('should refuse tool calls past the limit when the script makes too many', async () => {
    const calls: SandboxToolCall[] = [];
    const result = await sandbox.run({
      code: `let s = 0;\nfor (let i = 0; i < 10; i++) {\n  s += (await math.add({ a: i, b: 0 })).sum;\n}\nreturn s;`,
      tools: TOOLS,
      callTool: host(calls),
      limits: { maxToolCalls: 3 },
    });
    expect(calls).toHaveLength(3);
    expect(result.error).toMatchObject({
      kind: ScriptErrorKind.Limit,
      limit: SandboxLimitKind.ToolCalls,
      code: TOOL_CALL_LIMIT_CODE,
      line: 3,
      tool: 'math__add',
      args: { a: 3, b: 0 },
    });
    expect(result.toolCalls).toBe(4);
  });

  it('should cap console output and count what it dropped when a script logs too much', async () => {
    const result = await sandbox.run({
      code: `for (let i = 0; i < 100; i++) console.log('line ' + i);\nreturn 'done';`,
      callTool: host(),
      limits: { maxOutputChars: 50 },
    });
    expect(result.ok).toBe(true);
    expect(result.logs.join('').length).toBe(50);
    expect(result.droppedLogChars).toBeGreaterThan(0);
  });

  it('should refuse a returned value larger than the output limit', async () => {
    const result = await sandbox.run({
      code: `return 'x'.repeat(500);`,
      callTool: host(),
      limits: { maxOutputChars: 100 },
    });
    expect(result.error).toMatchObject({ kind: ScriptErrorKind.Limit, limit: SandboxLimitKind.Output });
  });

  it('should give the script no I/O when it looks for Node or browser APIs', async () => {
    const result = await sandbox.run({
      code: `return [typeof require, typeof process, typeof fetch, typeof setTimeout, typeof XMLHttpRequest, typeof globalThis.std, typeof globalThis.os];`,
      callTool: host(),
    });
    expect(result.value).toEqual(Array(7).fill('undefined'));
  });

  it('should keep runs isolated when one script sets a global', async () => {
    await sandbox.run({ code: `globalThis.leak = 42;`, callTool: host() });
    const result = await sandbox.run({ code: `return typeof leak;`, callTool: host() });
    expect(result.value).toBe('undefined');
  });

  it('should stop the run and abort calls in flight when the caller cancels', async () => {
    const controller = new AbortController();
    let aborted = false;
    const running = sandbox.run({
      code: `await callTool('x__wait', {});`,
      callTool: (_call, signal) =>
        new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () => ((aborted = true), reject(new Error('aborted')))),
        ),
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 50);
    expect((await running).error).toMatchObject({ kind: ScriptErrorKind.Aborted });
    expect(aborted).toBe(true);
  });
});
