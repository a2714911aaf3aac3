import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable } from '@nestjs/common';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CODE_MODE_TOOL_NAMES, META_TOOL_NAMES, READ_RESULT_PAGE_TOOL } from '@tollgate/disclosure';
import { Principal } from '@tollgate/identity';
import { TrailKind, scrubSecrets } from '@tollgate/kernel';
import { TrailRecorder } from '@tollgate/usage';
import { countJsonTokens } from '@tollgate/tokens';
import { CALL_META_KEY, CallMeta } from '../governed-call/call-meta';
import { ToolErrorBody, toolErrorOf } from '../governed-call/tool-error';
import { McpSession } from '../session/mcp-session.store';

/** Where a discovery answer names the catalog version it was rendered from (beside mode and tokens). */
export const TRAIL_VERSION_META_KEY = 'tollgate/catalog';

/** The kind of trail step each edge tool answers; anything else is a governed call. */
const KIND_OF_TOOL: Readonly<Record<string, TrailKind>> = {
  [META_TOOL_NAMES.listCategories]: 'CATEGORIES',
  [META_TOOL_NAMES.searchTools]: 'SEARCH',
  [META_TOOL_NAMES.getToolSchemas]: 'SCHEMAS',
  [CODE_MODE_TOOL_NAMES.listFiles]: 'FILES_LIST',
  [CODE_MODE_TOOL_NAMES.readFiles]: 'FILES_READ',
  [CODE_MODE_TOOL_NAMES.getToolDocs]: 'DOCS_READ',
  [CODE_MODE_TOOL_NAMES.runScript]: 'SCRIPT',
  [READ_RESULT_PAGE_TOOL]: 'RESULT_PAGE',
};

type Args = Record<string, unknown> | undefined;

/** One inner call of a script as the governed pipeline answered it (FULL trails keep what it returned). */
export interface ScriptCallSeen {
  tool: string;
  line: number | null;
  args: unknown;
  result: CallToolResult;
}

// The inner calls of the script being run in this async context, when its org keeps FULL trails.
const SCRIPT_CALLS = new AsyncLocalStorage<ScriptCallSeen[]>();

// The structured answer a discovery tool or script rendered, by the result that carries its JSON:
// the trail reads names and sizes from it instead of parsing the text the agent got.
const SHOWN = new WeakMap<CallToolResult, Record<string, unknown>>();

/** Remembers the structured answer behind a result's text, for its trail step. */
export function withShownAnswer<T extends object>(result: CallToolResult, answer: T): CallToolResult {
  SHOWN.set(result, answer as Record<string, unknown>);
  return result;
}

/** A discovery answer as the agent gets it: its JSON, and the catalog version it was rendered from. */
export function discoveryResult(rendered: { answer: object; json: string }, catalogVersion: string): CallToolResult {
  return withShownAnswer(
    {
      content: [{ type: 'text', text: rendered.json }],
      _meta: { [TRAIL_VERSION_META_KEY]: { version: catalogVersion } },
    },
    rendered.answer,
  );
}

/** Called by code mode for each inner call of a script: kept only while a FULL trail captures it. */
export function noteScriptCall(index: number, seen: ScriptCallSeen): void {
  const calls = SCRIPT_CALLS.getStore();
  if (calls) calls[index] = seen;
}

/**
 * Turns what the edge answered into trail steps (`TrailRecorder`): the metadata an operator follows
 * an agent by is read from the answer the agent got (its JSON and `_meta`), so recording needs no
 * change to how answers are made. Content (arguments, answers, script text) is built only when the
 * organisation keeps it. Nothing here is awaited by the call.
 */
@Injectable()
export class AgentTrail {
  constructor(private readonly recorder: TrailRecorder) {}

  /** A `tools/list` answer. */
  toolList(
    principal: Principal,
    session: McpSession | null,
    list: { mode: string; tokens: number; tools: { name: string }[]; catalogVersion: string | null },
  ): void {
    if (!this.recorder.keeps(principal)) return;
    this.recorder.record(principal, {
      sessionId: session?.id ?? null,
      kind: 'TOOLS_LIST',
      name: 'tools/list',
      catalogVersion: list.catalogVersion,
      tokens: list.tokens,
      ok: true,
      code: null,
      callId: null,
      costMicros: null,
      detail: { mode: list.mode, names: list.tools.map((t) => t.name) },
    });
  }

  /** Where a script's inner calls are captured: only for a script of an org that keeps FULL trails. */
  scriptCallsFor(principal: Principal, name: string): ScriptCallSeen[] | undefined {
    return name === CODE_MODE_TOOL_NAMES.runScript && principal.trailMode === 'FULL' ? [] : undefined;
  }

  /** Runs a script with its inner calls noted in `scriptCalls` (what each returned). */
  capturingScriptCalls<T>(scriptCalls: ScriptCallSeen[], run: () => Promise<T>): Promise<T> {
    return SCRIPT_CALLS.run(scriptCalls, run);
  }

  /** A `tools/call` answer: a meta-tool's, a code-mode tool's, a result page, or a governed call's. */
  toolAnswer(
    principal: Principal,
    session: McpSession | null,
    name: string,
    args: Args,
    result: CallToolResult,
    scriptCalls?: ScriptCallSeen[],
  ): void {
    if (!this.recorder.keeps(principal)) return;
    const kind = KIND_OF_TOOL[name] ?? 'CALL';
    const called = name === META_TOOL_NAMES.callTool && typeof args?.name === 'string' ? args.name : name;
    const callArgs = called !== name ? (args?.arguments as Args) : args;
    const meta = result._meta?.[CALL_META_KEY] as CallMeta | undefined;
    const error = toolErrorOf(result);
    const failed = result.isError === true;
    // Discovery answers and scripts: the structured answer their JSON was rendered from; its own
    // `tokens` field is the exact count of what the agent read.
    const answer = SHOWN.get(result);
    const tokens =
      meta?.outputTokens ?? (typeof answer?.tokens === 'number' ? answer.tokens : countJsonTokens(result.content));
    this.recorder.record(principal, {
      sessionId: session?.id ?? null,
      kind,
      name: called,
      catalogVersion: catalogVersionOf(result),
      tokens,
      ok: !failed,
      code: failed ? (typeof error?.code === 'string' ? error.code : 'TOOL_FAILED') : null,
      callId: meta?.callId ?? null,
      costMicros: kind === 'SCRIPT' ? scriptCost(result) : (meta?.costMicros ?? null),
      detail: detailOf(kind, args, answer, error),
      // Made only for an org that keeps content: every governed call records a step, and a closure
      // here would make this function allocate a context for its variables on every call.
      content: this.recorder.keepsContent(principal)
        ? answerContent(kind, args, callArgs, answer, result, scriptCalls)
        : undefined,
    });
  }

  /**
   * A `resources/list`, `resources/templates/list` or `prompts/list` answer: what the agent was shown
   * to read or get (URIs, URI templates, prompt names), so a later read or get links to it (`ledBy`).
   */
  itemList(
    principal: Principal,
    session: McpSession | null,
    kind: 'RESOURCES_LIST' | 'PROMPTS_LIST',
    name: 'resources/list' | 'resources/templates/list' | 'prompts/list',
    shown: string[],
    answer: unknown,
  ): void {
    if (!this.recorder.keeps(principal)) return;
    this.recorder.record(principal, {
      sessionId: session?.id ?? null,
      kind,
      name,
      catalogVersion: null,
      tokens: countJsonTokens(answer),
      ok: true,
      code: null,
      callId: null,
      costMicros: null,
      detail: name === 'resources/templates/list' ? { templates: shown } : { names: shown },
      content: () => ({ answer }),
    });
  }

  /** A resource read or prompt get, recorded when it settles (a refusal is a JSON-RPC error). */
  async item<T extends { _meta?: Record<string, unknown> }>(
    principal: Principal,
    session: McpSession | null,
    kind: 'RESOURCE_READ' | 'PROMPT_GET',
    name: string,
    run: () => Promise<T>,
  ): Promise<T> {
    if (!this.recorder.keeps(principal)) return run();
    const step = { sessionId: session?.id ?? null, kind, name, catalogVersion: null };
    try {
      const result = await run();
      const meta = result._meta?.[CALL_META_KEY] as CallMeta | undefined;
      this.recorder.record(principal, {
        ...step,
        tokens: meta?.outputTokens ?? 0,
        ok: true,
        code: null,
        callId: meta?.callId ?? null,
        costMicros: meta?.costMicros ?? null,
        detail: {},
        content: () => ({ answer: result }),
      });
      return result;
    } catch (err) {
      const data = (err as { data?: { code?: unknown } }).data;
      const code = typeof data?.code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(data.code) ? data.code : 'REFUSED';
      this.recorder.record(principal, {
        ...step,
        tokens: 0,
        ok: false,
        code,
        callId: null,
        costMicros: null,
        detail: { message: String((err as Error).message).slice(0, 300) },
      });
      throw err;
    }
  }
}

/** What a FULL trail keeps of a `tools/call`: the arguments (a script's code), the answer, a script's inner calls. */
function answerContent(
  kind: TrailKind,
  args: Args,
  callArgs: Args,
  answer: Record<string, unknown> | undefined,
  result: CallToolResult,
  scriptCalls: ScriptCallSeen[] | undefined,
): () => Record<string, unknown> {
  return () => ({
    ...(kind === 'SCRIPT' ? { code: args?.code } : { arguments: callArgs ?? {} }),
    answer: answer ?? textOf(result),
    // Each inner call of a script with its arguments and what the tool returned.
    ...(scriptCalls
      ? {
          calls: scriptCalls
            .filter((c) => c !== undefined)
            .map((c) => ({
              tool: c.tool,
              line: c.line ?? null,
              arguments: c.args,
              ...(c.result.isError ? { isError: true } : {}),
              returned: c.result.structuredContent ?? c.result.content,
            })),
        }
      : {}),
  });
}

function textOf(result: CallToolResult): string {
  const first = result.content?.[0];
  return result.content?.length === 1 && first?.type === 'text' ? first.text : '';
}

function catalogVersionOf(result: CallToolResult): string | null {
  const v = (result._meta?.[TRAIL_VERSION_META_KEY] as { version?: unknown } | undefined)?.version;
  return typeof v === 'string' ? v : null;
}

function scriptCost(result: CallToolResult): number | null {
  const cost = (result._meta?.['tollgate/script'] as { costMicros?: unknown } | undefined)?.costMicros;
  return typeof cost === 'number' ? cost : null;
}

/** The names (or paths) of a list of strings or entries. */
function names(list: unknown, field: 'name' | 'path' = 'name'): string[] {
  if (!Array.isArray(list)) return [];
  return list.map((x) => {
    if (typeof x === 'string') return x;
    const entry = (x ?? {}) as Record<string, unknown>;
    return String(entry[field] ?? entry.name ?? entry.path);
  });
}

/**
 * Metadata of a step: what was asked of the catalog and what came back by name, never tenant data.
 * A script keeps its inner calls (tool, line, ok, code, ledger id, cost) and where it failed.
 */
function detailOf(
  kind: TrailKind,
  args: Args,
  answer: Record<string, unknown> | undefined,
  error: ToolErrorBody | undefined,
): Record<string, unknown> {
  const a = args ?? {};
  switch (kind) {
    case 'SEARCH':
      return {
        // The agent's own words: kept in every mode, so masked like content.
        query: typeof a.query === 'string' ? (scrubSecrets(a.query.slice(0, 500)) as string) : '',
        ...(typeof a.category === 'string' ? { category: a.category } : {}),
        ...(typeof a.server === 'string' ? { server: a.server } : {}),
        names: names(answer?.tools),
        ...pageOf(a, answer),
      };
    case 'SCHEMAS':
      return {
        requested: names(a.names),
        names: names(answer?.tools),
        ...(answer?.unknown ? { unknown: names(answer.unknown) } : {}),
        ...(answer?.tooLarge ? { tooLarge: names(answer.tooLarge) } : {}),
        ...pageOf(a, answer),
      };
    case 'CATEGORIES':
      return { names: names(answer?.categories), ...pageOf(a, answer) };
    case 'FILES_LIST':
      return {
        path: typeof a.path === 'string' ? a.path : '',
        paths: [...names(answer?.dirs, 'path'), ...names(answer?.files, 'path')],
        ...pageOf(a, answer),
      };
    case 'FILES_READ':
    case 'DOCS_READ': {
      const paths = names(answer?.files, 'path');
      return {
        requested: names(a.paths),
        paths,
        // The tools read: docs name them, a stub's path is servers/<server>/<tool>.d.ts.
        names: [...names(answer?.tools), ...paths.map(stubToolName).filter((n): n is string => n !== null)],
        ...(answer?.unknown ? { unknown: names(answer.unknown) } : {}),
        ...pageOf(a, answer),
      };
    }
    case 'SCRIPT': {
      const err = answer?.error as { line?: unknown; code?: unknown; tool?: unknown } | undefined;
      return {
        calls: Array.isArray(answer?.calls) ? answer.calls : [],
        ...(typeof answer?.durationMs === 'number' ? { durationMs: answer.durationMs } : {}),
        ...(err
          ? {
              failedLine: typeof err.line === 'number' ? err.line : null,
              ...(err.tool ? { failedTool: err.tool } : {}),
            }
          : {}),
      };
    }
    case 'RESULT_PAGE':
      return {
        ...(typeof a.handle === 'string' ? { handle: a.handle } : {}),
        ...(typeof a.cursor === 'string' ? { cursor: a.cursor } : {}),
      };
    default:
      return error?.hint && typeof error.message === 'string' ? { message: error.message.slice(0, 300) } : {};
  }
}

/** Where a paged discovery answer stands (more to come, the cursor it was asked with): only those answers page. */
function pageOf(a: Record<string, unknown>, answer: Record<string, unknown> | undefined): Record<string, unknown> {
  return {
    ...(answer?.hasMore ? { hasMore: true } : {}),
    ...(typeof a.cursor === 'string' ? { cursor: a.cursor } : {}),
  };
}

/** `servers/github/create_issue.d.ts` -> `github__create_issue` (the stub tree's layout, CodeModeFiles). */
function stubToolName(path: string): string | null {
  const m = /^servers\/([^/]+)\/(.+)\.d\.ts$/.exec(path);
  return m ? `${m[1]}__${m[2]}` : null;
}
