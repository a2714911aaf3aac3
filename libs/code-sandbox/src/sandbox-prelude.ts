/** File name the agent's script is evaluated under; stack frames name it, so lines can be found. */
export const SCRIPT_FILE_NAME = 'script.js';
export const PRELUDE_FILE_NAME = 'tollgate-prelude.js';

/**
 * Source evaluated in every fresh context before the script. It evaluates to a function taking the
 * host bridge (`call`, `log`, `finish`) and the tool bindings as JSON; it installs `callTool`,
 * one object per namespace (`github.create_issue(args)`), `ToolError` and a capturing `console`,
 * and returns the runner the script is wrapped in. Plain ES2020, run by QuickJS, never by Node.
 */
export const SANDBOX_PRELUDE = String.raw`(function (host, bindingsJson) {
  'use strict';
  const FRAME = /\(?script\.js:(\d+)(?::\d+)?\)?/;
  function scriptLine(stack) {
    const m = FRAME.exec(String(stack === undefined ? '' : stack));
    return m ? Number(m[1]) : null;
  }
  function format(value) {
    if (typeof value === 'string') return value;
    if (value instanceof Error) return value.name + ': ' + value.message;
    try {
      const json = JSON.stringify(value);
      return json === undefined ? String(value) : json;
    } catch (e) {
      return String(value);
    }
  }
  class ToolError extends Error {
    constructor(detail) {
      super(detail.message);
      this.name = 'ToolError';
      this.code = detail.code;
      this.tool = detail.tool;
      this.args = detail.args;
      this.line = detail.line;
      this.answer = detail.answer;
    }
  }
  async function callTool(name, args) {
    if (typeof name !== 'string') throw new TypeError('callTool(name, args): name must be a tool name such as "github__create_issue"');
    if (args === undefined) args = {};
    if (args === null || typeof args !== 'object' || Array.isArray(args)) throw new TypeError(name + ': args must be an object');
    const line = scriptLine(new Error().stack);
    const answer = JSON.parse(await host.call(name, JSON.stringify(args), line === null ? -1 : line));
    if (answer.ok) return answer.value;
    throw new ToolError(answer.error);
  }
  const log = function () {
    host.log(Array.prototype.map.call(arguments, format).join(' '));
  };
  globalThis.console = Object.freeze({ log: log, info: log, warn: log, error: log, debug: log });
  globalThis.callTool = callTool;
  globalThis.ToolError = ToolError;
  const namespaces = {};
  for (const b of JSON.parse(bindingsJson)) {
    if (!(b.namespace in namespaces)) {
      if (b.namespace in globalThis) continue;
      namespaces[b.namespace] = {};
    }
    namespaces[b.namespace][b.method] = function (args) { return callTool(b.tool, args); };
  }
  for (const ns of Object.keys(namespaces)) globalThis[ns] = Object.freeze(namespaces[ns]);

  function describe(e) {
    if (e instanceof ToolError) return { name: 'ToolError', message: e.message, code: e.code, tool: e.tool, args: e.args, line: e.line, answer: e.answer };
    if (e instanceof Error) return { name: e.name, message: e.message, line: scriptLine(e.stack) };
    return { name: 'Thrown', message: 'The script threw a non-Error value: ' + format(e) };
  }
  return function run(script) {
    let done;
    try {
      done = Promise.resolve(script());
    } catch (e) {
      done = Promise.reject(e);
    }
    done.then(
      function (value) {
        let json;
        try {
          json = value === undefined ? undefined : JSON.stringify(value);
        } catch (e) {
          host.finish(JSON.stringify({ ok: false, error: { name: 'TypeError', message: 'The returned value cannot be turned into JSON: ' + e.message } }));
          return;
        }
        host.finish(json === undefined ? '{"ok":true}' : '{"ok":true,"value":' + json + '}');
      },
      function (e) {
        host.finish(JSON.stringify({ ok: false, error: describe(e) }));
      },
    );
  };
})`;

/** The script as evaluated: an async function body, its first line on line 1 of `script.js`. */
export function wrapScript(code: string): string {
  return `__tollgateRun(async () => {${code}\n})`;
}
