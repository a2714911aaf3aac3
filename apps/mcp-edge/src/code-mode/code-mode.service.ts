import { Injectable, Logger } from '@nestjs/common';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { OrgCatalog, ToolCatalogService } from '@tollgate/upstream-registry';
import {
  CodeSandbox,
  SandboxToolAnswer,
  SandboxToolCall,
  ScriptError,
  ScriptErrorKind,
  ScriptRunResult,
} from '@tollgate/code-sandbox';
import {
  CODE_MODE_TOOL_NAMES,
  CodeModeFiles,
  DisclosureException,
  DisclosureScope,
  ScriptCallReport,
  ScriptErrorReport,
  fitScriptAnswer,
  requestedDisclosureMode,
  disclosureToolOf,
} from '@tollgate/disclosure';
import { Principal } from '@tollgate/identity';
import { PolicyService } from '@tollgate/policy';
import { disclosureErrorResult, optInt, optString } from '../disclosure/disclosure-call';
import { disclosureScopeFor } from '../disclosure/disclosure-scope';
import { CALL_META_KEY, CallMeta } from '../governed-call/call-meta';
import { GovernedCallPipeline } from '../governed-call/governed-call.pipeline';
import { ERROR_META_KEY, ToolErrorCode, toolErrorOf, toolErrorResult } from '../governed-call/tool-error';
import { discoveryResult, noteScriptCall, withShownAnswer } from '../trail/agent-trail';

export const SCRIPT_META_KEY = 'tollgate/script';

/** Search stays available in code mode: browsing a tree of thousands of stubs is slow. */

/**
 * Code mode: `tools/list` holds a virtual file tree of typed stubs (list, read, docs), search, and a
 * script runner. Scripts run in the QuickJS sandbox; every tool call they make goes through the
 * governed pipeline (policy, rate limit, price, budget, upstream, meter), so a refusal or failure
 * reaches the script as a `ToolError` it can catch, and the run reports it.
 */
@Injectable()
export class CodeModeService {
  private readonly logger = new Logger(CodeModeService.name);
  private readonly files = new WeakMap<OrgCatalog, CodeModeFiles>();
  private readonly sandbox = new CodeSandbox();

  constructor(
    private readonly catalogs: ToolCatalogService,
    private readonly policies: PolicyService,
    private readonly pipeline: GovernedCallPipeline,
  ) {}

  /** Whether the caller is served code mode: the key's mode, else the most specific policy's. */
  async appliesTo(principal: Principal): Promise<boolean> {
    return requestedDisclosureMode(principal.disclosureMode, await this.policies.levelsFor(principal)) === 'CODE';
  }

  async callTool(
    principal: Principal,
    name: string,
    args: Record<string, unknown> | undefined,
    signal?: AbortSignal,
  ): Promise<CallToolResult> {
    if (!(await this.appliesTo(principal))) {
      return toolErrorResult({
        code: ToolErrorCode.UnknownTool,
        message: `"${name}" is only available in code mode.`,
        hint: 'List tools to see what this key may use.',
        tool: name,
      });
    }
    const a = args ?? {};
    const view = await this.view(principal);
    try {
      switch (name) {
        case CODE_MODE_TOOL_NAMES.listFiles:
          return discoveryResult(
            view.files.listFiles(
              {
                path: optString(a.path),
                recursive: a.recursive === true,
                maxTokens: optInt(a.maxTokens),
                cursor: optString(a.cursor),
              },
              view.scope,
            ),
            view.files.version,
          );
        case CODE_MODE_TOOL_NAMES.readFiles:
          return discoveryResult(
            view.files.readFiles(
              { paths: stringList(a.paths), maxTokens: optInt(a.maxTokens), cursor: optString(a.cursor) },
              view.scope,
            ),
            view.files.version,
          );
        case CODE_MODE_TOOL_NAMES.getToolDocs:
          return discoveryResult(
            view.files.readDocs(
              { paths: stringList(a.paths), maxTokens: optInt(a.maxTokens), cursor: optString(a.cursor) },
              view.scope,
            ),
            view.files.version,
          );
        case CODE_MODE_TOOL_NAMES.runScript:
          return await this.runScript(principal, view, a, signal);
        default:
          return toolErrorResult({
            code: ToolErrorCode.UnknownTool,
            message: `No code-mode tool named "${name}".`,
            hint: 'List tools to see them.',
            tool: name,
          });
      }
    } catch (err) {
      if (err instanceof DisclosureException) return disclosureErrorResult(err, name);
      throw err;
    }
  }

  private async runScript(
    principal: Principal,
    view: CodeModeView,
    a: Record<string, unknown>,
    signal: AbortSignal | undefined,
  ): Promise<CallToolResult> {
    if (typeof a.code !== 'string' || a.code.trim() === '') {
      return toolErrorResult({
        code: ToolErrorCode.InvalidRequest,
        message: 'code must be the script to run.',
        hint: 'Pass JavaScript, e.g. `return await github.get_me({});`.',
        tool: CODE_MODE_TOOL_NAMES.runScript,
      });
    }
    const timeoutMs = optInt(a.timeoutMs);
    const calls: ScriptCallReport[] = [];
    let costMicros = 0;
    const inFlight = new Set<Promise<unknown>>();
    const innerCall = async (call: SandboxToolCall, callSignal: AbortSignal): Promise<SandboxToolAnswer> => {
      const result = await this.pipeline.callTool(principal, call.tool, call.args, callSignal);
      noteScriptCall(call.index, { tool: call.tool, line: call.line, args: call.args, result });
      const meta = result._meta?.[CALL_META_KEY] as CallMeta | undefined;
      const refusal = toolErrorOf(result);
      costMicros += meta?.costMicros ?? 0;
      const failed = result.isError === true;
      calls[call.index] = {
        tool: call.tool,
        line: call.line,
        ok: !failed,
        ...(failed ? { code: refusal?.code ?? ToolErrorCode.ToolFailed } : {}),
        ...(meta ? { callId: meta.callId, costMicros: meta.costMicros } : {}),
      };
      if (!failed) return { ok: true, value: scriptValue(result) };
      if (refusal) return { ok: false, error: refusal };
      return {
        ok: false,
        error: {
          code: ToolErrorCode.ToolFailed,
          message: `The tool answered with an error: ${contentText(result)}`,
          hint: 'Check the arguments against the tool docs.',
          toolAnswer: result.content,
        },
      };
    };
    const run = await this.sandbox.run({
      code: a.code,
      tools: view.files.bindings(view.scope),
      limits: timeoutMs ? { wallTimeMs: timeoutMs } : {},
      signal,
      callTool: (call: SandboxToolCall, callSignal: AbortSignal): Promise<SandboxToolAnswer> => {
        const answered = innerCall(call, callSignal);
        inFlight.add(answered);
        return answered;
      },
    });
    // A run stopped (time limit, an uncaught error) while a call was in flight has aborted it; the
    // call still ends as a metered one (a cancelled call has its ledger row), so the answer and the
    // trail wait for it and list it with its id and cost, as the ledger does.
    await Promise.allSettled(inFlight);
    const error = run.error ? errorReport(run.error) : undefined;
    const fitted = fitScriptAnswer(
      {
        ok: run.ok,
        ...(run.ok && 'value' in run ? { result: { value: run.value } } : {}),
        ...(error ? { error } : {}),
        logs: run.logs,
        droppedLogChars: run.droppedLogChars,
        calls: calls.filter((c): c is ScriptCallReport => c !== undefined),
        costMicros,
        durationMs: run.durationMs,
      },
      optInt(a.maxTokens),
      view.scope.maxTokensCeiling,
    );
    this.logRun(principal, run, calls.length);
    const answer = fitted.answer;
    const scriptMeta = {
      calls: answer.calls.map((c) => c.callId).filter(Boolean),
      costMicros,
      durationMs: run.durationMs,
    };
    return withShownAnswer(
      {
        content: [{ type: 'text', text: fitted.json }],
        ...(answer.ok ? {} : { isError: true }),
        _meta: { [SCRIPT_META_KEY]: scriptMeta, ...(answer.error ? { [ERROR_META_KEY]: answer.error } : {}) },
      },
      answer,
    );
  }

  private logRun(principal: Principal, run: ScriptRunResult, calls: number): void {
    this.logger.log({
      msg: 'script run',
      keyId: principal.keyId,
      ok: run.ok,
      error: run.error?.kind,
      durationMs: run.durationMs,
      toolCalls: calls,
    });
  }

  private async view(principal: Principal): Promise<CodeModeView> {
    const [orgCatalog, levels] = await Promise.all([
      this.catalogs.catalogFor(principal.orgId),
      this.policies.levelsFor(principal),
    ]);
    let files = this.files.get(orgCatalog);
    if (!files) {
      files = new CodeModeFiles(orgCatalog.tools.map((t) => disclosureToolOf(t, undefined)));
      this.files.set(orgCatalog, files);
    }
    return { files, scope: disclosureScopeFor(orgCatalog, levels) };
  }
}

interface CodeModeView {
  files: CodeModeFiles;
  scope: DisclosureScope;
}

/** What a script receives from a successful call: structured content, else the text (as JSON when it parses). */
function scriptValue(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const content = result.content ?? [];
  if (content.length === 1 && content[0].type === 'text') {
    const text = content[0].text;
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return content;
}

function contentText(result: CallToolResult): string {
  return (result.content ?? [])
    .filter((c): c is { type: 'text'; text: string } => c.type === 'text')
    .map((c) => c.text)
    .join('\n')
    .slice(0, 500);
}

/** The structured body of a failed run, as every refusal on the edge has one: code, message, hint, details. */
function errorReport(e: ScriptError): ScriptErrorReport {
  const at = e.line ? { line: e.line } : {};
  switch (e.kind) {
    case ScriptErrorKind.Tool: {
      const answer = (e.answer ?? {}) as { hint?: unknown };
      return {
        code: e.code ?? ToolErrorCode.ToolFailed,
        message: e.message,
        hint:
          typeof answer.hint === 'string'
            ? answer.hint
            : 'Catch ToolError in the script (e.code, e.answer) or fix the call.',
        ...at,
        tool: e.tool,
        args: e.args,
        answer: e.answer,
      };
    }
    case ScriptErrorKind.Limit:
      return {
        code: ToolErrorCode.ScriptLimitExceeded,
        limit: e.limit,
        message: e.message,
        hint: LIMIT_HINTS[e.limit ?? 'TIME'] ?? 'Do less in one script.',
        ...at,
        ...(e.tool ? { tool: e.tool, args: e.args } : {}),
      };
    case ScriptErrorKind.Syntax:
    case ScriptErrorKind.Runtime:
      return {
        code: ToolErrorCode.ScriptError,
        kind: e.kind,
        name: e.name,
        message: e.message,
        hint: e.line ? `Fix line ${e.line} and run the script again.` : 'Fix the script and run it again.',
        ...at,
      };
    case ScriptErrorKind.Aborted:
      return {
        code: ToolErrorCode.ScriptError,
        kind: e.kind,
        name: e.name,
        message: e.message,
        hint: 'The request was cancelled; run the script again if you still need it.',
      };
  }
}

const LIMIT_HINTS: Record<string, string> = {
  TIME: 'Do less in one script (fewer or faster calls), or pass a larger timeoutMs.',
  MEMORY: 'Keep less in memory: process results as they come and return only what you need.',
  TOOL_CALLS: 'Batch the work into fewer calls, or split it over several scripts.',
  OUTPUT: 'Return and log less: the fields or a summary you need.',
};

function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.map(String) : typeof v === 'string' ? [v] : [];
}
