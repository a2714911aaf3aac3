import { countTokens } from '@tollgate/tokens';
import { describe, expect, it } from 'vitest';
import { CodeModeFiles, codeIdentifier } from './code-mode-files';
import { fitScriptAnswer } from './code-mode-tools';
import { DisclosureTool } from './disclosure-tool';

function tool(namespace: string, name: string, description = `Does ${name}.`): DisclosureTool {
  return {
    name: `${namespace}__${name}`,
    namespace,
    description,
    inputSchema: { type: 'object', properties: { id: { type: 'string' }, n: { type: 'integer' } }, required: ['id'] },
  };
}

const TOOLS = [
  ...Array.from({ length: 40 }, (_, i) => tool('github', `tool_${String(i).padStart(2, '0')}`)),
  tool('everything', 'get-sum', 'Returns the sum of two numbers'),
  tool('everything', 'get_sum', 'A clash once made an identifier.'),
  tool('math', 'add'),
  tool('my-server', 'new'),
];

describe('CodeModeFiles', () => {
  const files = new CodeModeFiles(TOOLS);

  it('should list one directory per server with its file count when listing the root', () => {
    const { answer } = files.listFiles({});
    expect(answer.dirs).toEqual([
      { path: 'servers/everything/', files: 2 },
      { path: 'servers/github/', files: 40 },
      { path: 'servers/math/', files: 1 },
      { path: 'servers/my-server/', files: 1 },
    ]);
  });

  it('should page a directory within maxTokens without repeats or gaps when walked with the cursor', () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const { answer, json } = files.listFiles({ path: 'servers/github', maxTokens: 120, cursor });
      expect(answer.tokens).toBe(countTokens(json));
      expect(answer.tokens).toBeLessThanOrEqual(120);
      seen.push(...(answer.files ?? []).map((f) => f.path));
      cursor = answer.cursor;
    } while (cursor);
    expect(seen).toHaveLength(40);
    expect(new Set(seen).size).toBe(40);
  });

  it('should hide tools the caller may not see when a scope is given', () => {
    const scope = { isVisible: (n: string) => !n.startsWith('github__') };
    expect(files.listFiles({}, scope).answer.dirs?.map((d) => d.path)).not.toContain('servers/github/');
    expect(files.readFiles({ paths: ['servers/github/tool_01.d.ts'] }, scope).answer).toMatchObject({
      files: [],
      unknown: ['servers/github/tool_01.d.ts'],
    });
    expect(files.bindings(scope).map((b) => b.tool)).not.toContain('github__tool_01');
  });

  it('should write a typed stub in its namespace when a file is read by path or tool name', () => {
    const { answer } = files.readFiles({ paths: ['servers/everything/get-sum.d.ts', 'math__add'] });
    expect(answer.files.map((f) => f.path)).toEqual(['servers/everything/get-sum.d.ts', 'servers/math/add.d.ts']);
    expect(answer.files[0].content).toBe(
      'declare namespace everything {\n  /** Returns the sum of two numbers */\n  function get_sum(args: { id: string; n?: number }): Promise<unknown>;\n}\n',
    );
  });

  it('should give clashing and reserved names distinct identifiers that scripts can use', () => {
    const bindings = files.bindings();
    expect(bindings.find((b) => b.tool === 'everything__get-sum')).toEqual({
      tool: 'everything__get-sum',
      namespace: 'everything',
      method: 'get_sum',
    });
    expect(bindings.find((b) => b.tool === 'everything__get_sum')?.method).toBe('get_sum_2');
    expect(bindings.find((b) => b.tool === 'my-server__new')).toEqual({
      tool: 'my-server__new',
      namespace: 'my_server',
      method: 'new_',
    });
    expect(codeIdentifier('console')).toBe('console_');
    expect(codeIdentifier('3d')).toBe('_3d');
  });

  it('should give full docs by path and report unknown names when docs are asked for', () => {
    const { answer } = files.readDocs({ paths: ['servers/math/add.d.ts', 'nope__x'] });
    expect(answer.tools[0]).toMatchObject({ name: 'math__add', inputSchema: { required: ['id'] } });
    expect(answer.unknown).toEqual(['nope__x']);
  });

  it('should refuse a path outside servers/ when listing', () => {
    expect(() => files.listFiles({ path: '/etc/' })).toThrow(/servers\//);
  });
});

describe('fitScriptAnswer', () => {
  const base = { ok: true, logs: [] as string[], droppedLogChars: 0, calls: [], costMicros: 0, durationMs: 5 };

  it('should return the whole answer with its exact token count when it fits', () => {
    const { answer, json } = fitScriptAnswer({ ...base, result: { value: { a: 1 } }, logs: ['hi'] }, 500);
    expect(answer).toMatchObject({ ok: true, result: { a: 1 }, logs: ['hi'] });
    expect(answer.omitted).toBeUndefined();
    expect(answer.tokens).toBe(countTokens(json));
  });

  it('should drop log lines first and say how many when the logs do not fit', () => {
    const logs = Array.from({ length: 200 }, (_, i) => `log line number ${i} with some words`);
    const { answer } = fitScriptAnswer({ ...base, result: { value: 42 }, logs }, 300);
    expect(answer.tokens).toBeLessThanOrEqual(300);
    expect(answer.result).toBe(42);
    expect(answer.logs.length + (answer.omitted?.logs ?? 0)).toBe(200);
    expect(answer.omitted?.logs).toBeGreaterThan(0);
  });

  it('should report the run as failed with the value size when the returned value cannot fit', () => {
    const { answer } = fitScriptAnswer({ ...base, result: { value: 'word '.repeat(2_000) } }, 200);
    expect(answer.ok).toBe(false);
    expect(answer.error).toMatchObject({ code: 'SCRIPT_LIMIT_EXCEEDED', limit: 'OUTPUT' });
    expect(answer.omitted?.resultTokens).toBeGreaterThan(1_000);
    expect(answer.tokens).toBeLessThanOrEqual(200);
  });

  it('should keep the policy ceiling when the caller asks for more', () => {
    const logs = Array.from({ length: 100 }, (_, i) => `line ${i}`);
    expect(fitScriptAnswer({ ...base, logs }, 5_000, 150).answer.tokens).toBeLessThanOrEqual(150);
  });
});
