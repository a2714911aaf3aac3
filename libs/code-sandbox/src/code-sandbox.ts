import { readFile } from 'node:fs/promises';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import {
  QuickJSContext,
  QuickJSDeferredPromise,
  QuickJSHandle,
  QuickJSRuntime,
  QuickJSSyncVariant,
  newQuickJSWASMModuleFromVariant,
  newVariant,
} from 'quickjs-emscripten-core';
import { PRELUDE_FILE_NAME, SANDBOX_PRELUDE, SCRIPT_FILE_NAME, wrapScript } from './sandbox-prelude';
import { SandboxLimitKind, SandboxLimits, effectiveSandboxLimits } from './sandbox-limits';

/** Exposes tool `tool` to scripts as `<namespace>.<method>(args)` (and always as `callTool(tool, args)`). */
export interface SandboxToolBinding {
  tool: string;
  namespace: string;
  method: string;
}

/** One tool call a script made. */
export interface SandboxToolCall {
  tool: string;
  args: Record<string, unknown>;
  /** Line of the script that made the call, when the stack shows it. */
  line: number | null;
  /** 0-based order in which the script started its calls. */
  index: number;
}

/** What the host answers a tool call with: a value the script receives, or an error it can catch. */
export type SandboxToolAnswer =
  { ok: true; value: unknown } | { ok: false; error: { code: string; message: string; [detail: string]: unknown } };

export type SandboxToolInvoker = (call: SandboxToolCall, signal: AbortSignal) => Promise<SandboxToolAnswer>;

export interface ScriptRunRequest {
  /** JavaScript, run as the body of an async function: use `await`, `return` a JSON value. */
  code: string;
  tools?: readonly SandboxToolBinding[];
  callTool: SandboxToolInvoker;
  limits?: Partial<SandboxLimits>;
  /** Aborts the run (and the calls in flight), e.g. when the agent cancels its request. */
  signal?: AbortSignal;
}

export enum ScriptErrorKind {
  /** The script does not parse. */
  Syntax = 'SYNTAX',
  /** The script threw (or did not catch) an error of its own. */
  Runtime = 'RUNTIME',
  /** A tool call failed and the script did not catch it. */
  Tool = 'TOOL',
  /** A sandbox limit stopped the script. */
  Limit = 'LIMIT',
  /** The run was cancelled by the caller. */
  Aborted = 'ABORTED',
}

export interface ScriptError {
  kind: ScriptErrorKind;
  name: string;
  message: string;
  /** Line in the script (1-based) where it was thrown, or where the failed tool call was made. */
  line?: number;
  limit?: SandboxLimitKind;
  /** For tool errors: the tool's error code, the tool, the arguments and the tool's answer. */
  code?: string;
  tool?: string;
  args?: Record<string, unknown>;
  answer?: unknown;
}

export interface ScriptRunResult {
  ok: boolean;
  /** What the script returned (absent when it returned nothing). */
  value?: unknown;
  error?: ScriptError;
  /** Captured `console.*` lines, in order. */
  logs: string[];
  /** Characters of console output dropped after `maxOutputChars`; never dropped silently. */
  droppedLogChars: number;
  /** Tool calls the script started, refused ones included. */
  toolCalls: number;
  durationMs: number;
  limits: SandboxLimits;
}

// The repo compiles without DOM types, where WebAssembly is declared; Node has it at run time.
declare const WebAssembly: { compile(bytes: Uint8Array): Promise<object> };

/** Code the host gives a tool call the sandbox itself refused. */
export const TOOL_CALL_LIMIT_CODE = 'TOOL_CALL_LIMIT';

const FRAME = /\(?script\.js:(\d+)(?::\d+)?\)?/;

/**
 * Runs agent-written JavaScript in QuickJS compiled to WebAssembly, with no I/O but `callTool` (a
 * promise bridge to the host) and a captured `console`. Limits: wall time (an interrupt handler
 * stops busy loops; a timer stops a script waiting forever), heap and stack size, number of tool
 * calls, and output size.
 *
 * The WebAssembly is compiled once per process; every run gets its own instance (its own linear
 * memory, about 1 ms to instantiate), runtime and context, so nothing a script does, nor a QuickJS
 * fault, can reach another run.
 */
export class CodeSandbox {
  private compiled?: Promise<QuickJSSyncVariant>;

  /** Compiles the WebAssembly now rather than on the first run. */
  async warmUp(): Promise<void> {
    await this.variant();
  }

  async run(request: ScriptRunRequest): Promise<ScriptRunResult> {
    const limits = effectiveSandboxLimits(request.limits);
    const startedAt = performance.now();
    const module = await newQuickJSWASMModuleFromVariant(await this.variant());
    const deadline = Date.now() + limits.wallTimeMs;
    const runtime = module.newRuntime();
    runtime.setMemoryLimit(limits.memoryBytes);
    runtime.setMaxStackSize(limits.stackBytes);
    const cancel = new AbortController();
    const signal = request.signal ? AbortSignal.any([request.signal, cancel.signal]) : cancel.signal;
    runtime.setInterruptHandler(() => Date.now() > deadline || signal.aborted);
    const vm = runtime.newContext();
    const run = new ScriptRun(vm, runtime, limits, request, signal, deadline);
    let timer: NodeJS.Timeout | undefined;
    try {
      const stopped = new Promise<Outcome>((resolve) => {
        timer = setTimeout(() => resolve({ stop: SandboxLimitKind.Time }), Math.max(0, deadline - Date.now()));
        signal.addEventListener('abort', () => resolve({ stop: 'ABORTED' }), { once: true });
      });
      const outcome = await Promise.race([run.start(), stopped]);
      return run.result(outcome, Math.round(performance.now() - startedAt));
    } finally {
      clearTimeout(timer);
      cancel.abort();
      run.close();
      try {
        vm.dispose();
        runtime.dispose();
      } catch {
        // QuickJS can leak objects on some failures (a stack overflow) and then asserts while
        // freeing the runtime, which aborts this run's WebAssembly instance. The instance is
        // private to the run and dropped here, so the next run is unaffected.
      }
    }
  }

  private variant(): Promise<QuickJSSyncVariant> {
    this.compiled ??= (async () => {
      const bytes = await readFile(require.resolve('@jitl/quickjs-wasmfile-release-sync/wasm'));
      const wasmModule = (await WebAssembly.compile(bytes)) as Parameters<typeof newVariant>[1]['wasmModule'];
      return newVariant(variant, { wasmModule });
    })();
    return this.compiled;
  }
}

/** How a run ended: the script's own report (JSON from the prelude), an error QuickJS threw, or a stop. */
type Outcome =
  | { report: string }
  | { thrown: { name: string; message: string; stack?: string } }
  | { stop: SandboxLimitKind.Time | 'ABORTED' };

interface ToolErrorDetail {
  code: string;
  message: string;
  tool: string;
  args: Record<string, unknown>;
  line: number | null;
  answer: unknown;
}

/** The state of one run: the host bridge, the calls in flight, the captured output. */
class ScriptRun {
  private readonly logs: string[] = [];
  private logChars = 0;
  private droppedLogChars = 0;
  private toolCalls = 0;
  private readonly pending = new Set<QuickJSDeferredPromise>();
  private closed = false;
  private settle!: (outcome: Outcome) => void;
  private readonly outcome = new Promise<Outcome>((resolve) => (this.settle = resolve));

  constructor(
    private readonly vm: QuickJSContext,
    private readonly runtime: QuickJSRuntime,
    private readonly limits: SandboxLimits,
    private readonly request: ScriptRunRequest,
    private readonly signal: AbortSignal,
    private readonly deadline: number,
  ) {}

  start(): Promise<Outcome> {
    const { vm } = this;
    const host = vm.newObject();
    vm.newFunction('call', (name, args, line) =>
      this.hostCall(vm.getString(name), vm.getString(args), vm.getNumber(line)),
    ).consume((f) => vm.setProp(host, 'call', f));
    vm.newFunction('log', (line) => this.hostLog(vm.getString(line))).consume((f) => vm.setProp(host, 'log', f));
    vm.newFunction('finish', (report) => {
      this.settle({ report: vm.getString(report) });
    }).consume((f) => vm.setProp(host, 'finish', f));
    const prelude = vm.unwrapResult(vm.evalCode(SANDBOX_PRELUDE, PRELUDE_FILE_NAME));
    const bindings = vm.newString(JSON.stringify(this.request.tools ?? []));
    const runner = vm.unwrapResult(vm.callFunction(prelude, vm.undefined, host, bindings));
    vm.setProp(vm.global, '__tollgateRun', runner);
    for (const handle of [runner, bindings, prelude, host]) handle.dispose();

    try {
      const evaluated = vm.evalCode(wrapScript(this.request.code), SCRIPT_FILE_NAME);
      if (evaluated.error) this.thrown(evaluated.error);
      else evaluated.value.dispose();
    } catch (err) {
      this.hostFault(err);
    }
    this.pump();
    return this.outcome;
  }

  /** Runs the jobs a settled promise queued; an error escaping them ends the run. */
  private pump(): void {
    if (this.closed) return;
    try {
      const executed = this.runtime.executePendingJobs();
      if (executed.error) this.thrown(executed.error);
    } catch (err) {
      this.hostFault(err);
    }
  }

  /**
   * The WebAssembly itself failed. Deep recursion can exhaust Node's stack before QuickJS's own
   * check fires; that is the script's stack limit, not a host bug. The instance is dropped after.
   */
  private hostFault(err: unknown): void {
    if (err instanceof RangeError && /call stack/.test(err.message)) {
      this.settle({ thrown: { name: 'InternalError', message: 'stack overflow' } });
      return;
    }
    this.settle({ thrown: { name: 'SandboxFault', message: err instanceof Error ? err.message : String(err) } });
  }

  private thrown(error: QuickJSHandle): void {
    const dumped = this.vm.dump(error) as { name?: string; message?: string; stack?: string } | string;
    error.dispose();
    this.settle({
      thrown:
        typeof dumped === 'object' && dumped !== null
          ? { name: dumped.name ?? 'Error', message: dumped.message ?? String(dumped), stack: dumped.stack }
          : { name: 'Error', message: String(dumped) },
    });
  }

  private hostLog(line: string): void {
    const room = this.limits.maxOutputChars - this.logChars;
    if (line.length <= room) {
      this.logs.push(line);
      this.logChars += line.length;
      return;
    }
    // Keep what fits of the line that crosses the limit, then count the rest.
    if (room > 0 && this.droppedLogChars === 0) {
      this.logs.push(line.slice(0, room));
      this.logChars += room;
      this.droppedLogChars += line.length - room;
      return;
    }
    this.droppedLogChars += line.length;
  }

  private hostCall(tool: string, argsJson: string, rawLine: number): QuickJSHandle {
    const deferred = this.vm.newPromise();
    this.pending.add(deferred);
    const line = rawLine > 0 ? rawLine : null;
    const args = JSON.parse(argsJson) as Record<string, unknown>;
    const index = this.toolCalls++;
    const answer = (reply: SandboxToolAnswer) => {
      if (this.closed) return;
      this.pending.delete(deferred);
      const payload = reply.ok ? reply : { ok: false, error: this.toolErrorDetail(tool, args, line, reply.error) };
      this.vm.newString(JSON.stringify(payload)).consume((h) => deferred.resolve(h));
      this.pump();
    };
    if (index >= this.limits.maxToolCalls) {
      const max = this.limits.maxToolCalls;
      // Settled on the next tick: a handle must be returned before the promise may resolve.
      queueMicrotask(() =>
        answer({
          ok: false,
          error: {
            code: TOOL_CALL_LIMIT_CODE,
            message: `A script may make at most ${max} tool calls; this was call ${index + 1}.`,
            hint: 'Batch the work into fewer calls, or split it over several scripts.',
            maxToolCalls: max,
          },
        }),
      );
      return deferred.handle;
    }
    this.request
      .callTool({ tool, args, line, index }, this.signal)
      .then(answer, (err: unknown) =>
        answer({ ok: false, error: { code: 'HOST_ERROR', message: err instanceof Error ? err.message : String(err) } }),
      );
    return deferred.handle;
  }

  private toolErrorDetail(
    tool: string,
    args: Record<string, unknown>,
    line: number | null,
    error: { code: string; message: string },
  ): ToolErrorDetail {
    const where = line === null ? '' : ` (line ${line})`;
    return {
      code: error.code,
      message: `${tool}${where} failed with ${error.code}: ${error.message}`,
      tool,
      args,
      line,
      answer: error,
    };
  }

  result(outcome: Outcome, durationMs: number): ScriptRunResult {
    const base = {
      logs: this.logs,
      droppedLogChars: this.droppedLogChars,
      toolCalls: this.toolCalls,
      durationMs,
      limits: this.limits,
    };
    if ('stop' in outcome) {
      if (outcome.stop === 'ABORTED')
        return {
          ...base,
          ok: false,
          error: { kind: ScriptErrorKind.Aborted, name: 'Aborted', message: 'The run was cancelled.' },
        };
      return { ...base, ok: false, error: limitError(SandboxLimitKind.Time, this.limits) };
    }
    if ('thrown' in outcome)
      return {
        ...base,
        ok: false,
        error: this.classify(outcome.thrown.name, outcome.thrown.message, lineOf(outcome.thrown.stack)),
      };
    const report = JSON.parse(outcome.report) as {
      ok: boolean;
      value?: unknown;
      error?: {
        name: string;
        message: string;
        line?: number | null;
        code?: string;
        tool?: string;
        args?: Record<string, unknown>;
        answer?: unknown;
      };
    };
    if (report.ok) {
      const size = outcome.report.length - '{"ok":true,"value":}'.length;
      if (size > this.limits.maxOutputChars) {
        return {
          ...base,
          ok: false,
          error: {
            ...limitError(SandboxLimitKind.Output, this.limits),
            message: `The returned value is ${size} characters of JSON, over the limit of ${this.limits.maxOutputChars}. Return less (a summary, the fields you need).`,
          },
        };
      }
      return { ...base, ok: true, ...('value' in report ? { value: report.value } : {}) };
    }
    const e = report.error ?? { name: 'Error', message: 'The script failed.' };
    if (e.name === 'ToolError') {
      const kind = e.code === TOOL_CALL_LIMIT_CODE ? ScriptErrorKind.Limit : ScriptErrorKind.Tool;
      return {
        ...base,
        ok: false,
        error: {
          kind,
          name: e.name,
          message: e.message,
          ...(e.line ? { line: e.line } : {}),
          ...(kind === ScriptErrorKind.Limit ? { limit: SandboxLimitKind.ToolCalls } : {}),
          code: e.code,
          tool: e.tool,
          args: e.args,
          answer: e.answer,
        },
      };
    }
    return { ...base, ok: false, error: this.classify(e.name, e.message, e.line ?? undefined) };
  }

  private classify(name: string, message: string, line: number | undefined): ScriptError {
    const at = line ? { line } : {};
    if (name === 'InternalError' && message === 'interrupted' && this.signal.aborted && Date.now() <= this.deadline) {
      return { kind: ScriptErrorKind.Aborted, name: 'Aborted', message: 'The run was cancelled.' };
    }
    if (name === 'InternalError' && message === 'interrupted')
      return { ...limitError(SandboxLimitKind.Time, this.limits), ...at };
    if (name === 'InternalError' && /out of memory|stack overflow/.test(message)) {
      return {
        ...limitError(SandboxLimitKind.Memory, this.limits),
        message: `${message}: the script went over its memory limit of ${this.limits.memoryBytes} bytes (stack ${this.limits.stackBytes}).`,
        ...at,
      };
    }
    if (name === 'RangeError' && /string too long|invalid array length/.test(message)) {
      return {
        ...limitError(SandboxLimitKind.Memory, this.limits),
        message: `${message}: the script went over its memory limit.`,
        ...at,
      };
    }
    return {
      kind: name === 'SyntaxError' ? ScriptErrorKind.Syntax : ScriptErrorKind.Runtime,
      name,
      message: line ? `${name} at line ${line}: ${message}` : `${name}: ${message}`,
      ...at,
    };
  }

  /** Frees what the run still holds; replies arriving later are dropped. */
  close(): void {
    this.closed = true;
    for (const deferred of this.pending) deferred.dispose();
    this.pending.clear();
  }
}

function limitError(limit: SandboxLimitKind, limits: SandboxLimits): ScriptError {
  const message = {
    [SandboxLimitKind.Time]: `The script ran past its time limit of ${limits.wallTimeMs} ms and was stopped.`,
    [SandboxLimitKind.Memory]: `The script went over its memory limit of ${limits.memoryBytes} bytes.`,
    [SandboxLimitKind.ToolCalls]: `The script tried more than ${limits.maxToolCalls} tool calls.`,
    [SandboxLimitKind.Output]: `The script's output went over ${limits.maxOutputChars} characters.`,
  }[limit];
  return { kind: ScriptErrorKind.Limit, name: 'LimitError', message, limit };
}

function lineOf(stack: string | undefined): number | undefined {
  const m = stack ? FRAME.exec(stack) : null;
  return m ? Number(m[1]) : undefined;
}
