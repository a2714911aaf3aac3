import { countJsonTokens } from '@tollgate/tokens';
import { CODE_MODE_BUDGETS, CODE_MODE_TOOL_NAMES, withOwnTokens } from './code-mode-files';
import { DisclosureException, DisclosureExceptionCode } from './disclosure.exception';
import { ServedToolDefinition } from './disclosure-tool';

const MAX_TOKENS = { type: 'integer', minimum: 50, description: 'Answer budget in tokens' };
const CURSOR = { type: 'string', description: 'From the previous answer, for the next page' };

/**
 * Code mode's meta-tools: browse the stub tree, read stubs, read full docs, run a script. Terse:
 * they are most of the session's initial context.
 */
export const CODE_MODE_TOOL_DEFINITIONS: readonly ServedToolDefinition[] = [
  {
    name: CODE_MODE_TOOL_NAMES.listFiles,
    description:
      'List the tool stub tree: servers/ gives servers, servers/<server>/ its tools as <tool>.d.ts with a one-line summary.',
    inputSchema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Default servers/' },
        recursive: { type: 'boolean' },
        maxTokens: MAX_TOKENS,
        cursor: CURSOR,
      },
    },
  },
  {
    name: CODE_MODE_TOOL_NAMES.readFiles,
    description: 'Read stub files: the typed TypeScript signature and doc line of each tool.',
    inputSchema: {
      type: 'object',
      properties: {
        paths: {
          type: 'array',
          items: { type: 'string' },
          minItems: 1,
          description: 'e.g. servers/github/create_issue.d.ts',
        },
        maxTokens: MAX_TOKENS,
        cursor: CURSOR,
      },
      required: ['paths'],
    },
  },
  {
    name: CODE_MODE_TOOL_NAMES.getToolDocs,
    description: 'Full documentation (description and JSON schema) of tools, by stub path or tool name.',
    inputSchema: {
      type: 'object',
      properties: {
        paths: { type: 'array', items: { type: 'string' }, minItems: 1 },
        maxTokens: MAX_TOKENS,
        cursor: CURSOR,
      },
      required: ['paths'],
    },
  },
  {
    name: CODE_MODE_TOOL_NAMES.runScript,
    description:
      'Run JavaScript (an async function body; no imports, no I/O). Call tools as in their stubs, e.g. `await github.create_issue({...})`, ' +
      'or `await callTool("github__create_issue", {...})`; a failed call throws ToolError (e.code, e.answer). `return` a JSON value; console.log is captured. ' +
      'Every call is governed and priced.',
    inputSchema: {
      type: 'object',
      properties: { code: { type: 'string' }, timeoutMs: { type: 'integer', minimum: 100 }, maxTokens: MAX_TOKENS },
      required: ['code'],
    },
  },
];

/** One inner tool call of a script as its answer reports it. */
export interface ScriptCallReport {
  tool: string;
  line: number | null;
  ok: boolean;
  /** The refusal or failure code, for a failed call. */
  code?: string;
  callId?: string;
  costMicros?: number;
}

/** The error of a failed run: a tool's error body, or the script's own error or limit. */
export interface ScriptErrorReport {
  code: string;
  message: string;
  hint: string;
  [detail: string]: unknown;
}

export interface ScriptAnswerInput {
  ok: boolean;
  /** Present when the script returned a value. */
  result?: { value: unknown };
  error?: ScriptErrorReport;
  logs: readonly string[];
  droppedLogChars: number;
  calls: readonly ScriptCallReport[];
  costMicros: number;
  durationMs: number;
}

/** The run's answer body; `omitted` says what did not fit the budget, never cut silently. */
export interface ScriptAnswer {
  ok: boolean;
  result?: unknown;
  error?: ScriptErrorReport;
  logs: string[];
  calls: ScriptCallReport[];
  costMicros: number;
  durationMs: number;
  omitted?: { logs?: number; logChars?: number; calls?: number; resultTokens?: number; errorDetails?: string[] };
  tokens: number;
}

export const SCRIPT_OUTPUT_LIMIT_CODE = 'SCRIPT_LIMIT_EXCEEDED';

/**
 * The run's answer within `maxTokens`: whole if it fits; else the last log lines go first, then
 * the call list's tail, then the returned value (the run is then reported as failed with the
 * value's size, since the calls have run and been charged), then the bulky error details.
 */
export function fitScriptAnswer(
  input: ScriptAnswerInput,
  requestedMaxTokens: number | undefined,
  ceiling?: number,
): { answer: ScriptAnswer; json: string } {
  const maxTokens = Math.min(requestedMaxTokens ?? CODE_MODE_BUDGETS.runScript, ceiling ?? Number.POSITIVE_INFINITY);
  const omitted: NonNullable<ScriptAnswer['omitted']> = {};
  if (input.droppedLogChars > 0) omitted.logChars = input.droppedLogChars;
  let logs = [...input.logs];
  let calls = [...input.calls];
  let ok = input.ok;
  let error = input.error;
  let result = input.result;
  const build = () => {
    const body: Omit<ScriptAnswer, 'tokens'> = {
      ok,
      ...(result ? { result: result.value } : {}),
      ...(error ? { error } : {}),
      logs,
      calls,
      costMicros: input.costMicros,
      durationMs: input.durationMs,
    };
    if (Object.keys(omitted).length) body.omitted = { ...omitted };
    return withOwnTokens(body);
  };
  let built = build();
  if (built.answer.tokens <= maxTokens) return built;

  // Keep the longest prefix of a list that fits, by halving (a few counts, not one per item).
  const shrink = <T>(list: T[], set: (kept: T[]) => void, note: (dropped: number) => void) => {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      set(list.slice(0, mid));
      note(list.length - mid);
      if (build().answer.tokens <= maxTokens) lo = mid;
      else hi = mid - 1;
    }
    set(list.slice(0, lo));
    note(list.length - lo);
    built = build();
  };
  if (logs.length) {
    const all = logs;
    shrink(
      all,
      (kept) => (logs = kept),
      (n) => (n ? (omitted.logs = n) : delete omitted.logs),
    );
    if (built.answer.tokens <= maxTokens) return built;
  }
  if (calls.length) {
    const all = calls;
    shrink(
      all,
      (kept) => (calls = kept),
      (n) => (n ? (omitted.calls = n) : delete omitted.calls),
    );
    if (built.answer.tokens <= maxTokens) return built;
  }
  if (result) {
    omitted.resultTokens = countJsonTokens(result.value);
    result = undefined;
    ok = false;
    error ??= {
      code: SCRIPT_OUTPUT_LIMIT_CODE,
      limit: 'OUTPUT',
      message: `The script's returned value is ${omitted.resultTokens} tokens; the answer may take ${maxTokens}. Its tool calls ran and were charged.`,
      hint: 'Return less (the fields or a summary you need), or raise maxTokens.',
    };
    built = build();
    if (built.answer.tokens <= maxTokens) return built;
  }
  if (error) {
    const bulky = ['answer', 'args'].filter((k) => k in (error as object));
    if (bulky.length) {
      const slim: ScriptErrorReport = { ...error };
      for (const k of bulky) delete slim[k];
      error = slim;
      omitted.errorDetails = bulky;
      built = build();
      if (built.answer.tokens <= maxTokens) return built;
    }
  }
  throw new DisclosureException(
    DisclosureExceptionCode.BudgetTooSmall,
    `maxTokens ${maxTokens} cannot hold even a trimmed script answer (${built.answer.tokens} tokens).`,
    {
      maxTokens,
      minimum: built.answer.tokens,
    },
  );
}
