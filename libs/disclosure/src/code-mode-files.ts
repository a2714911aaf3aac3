import { countJsonTokens, countTokens } from '@tollgate/tokens';
import { decodeNameCursor, encodeNameCursor } from './disclosure-cursor';
import { DisclosureException, DisclosureExceptionCode } from './disclosure.exception';
import { BudgetedAnswer, budgetedPage, effectiveMaxTokens } from './disclosure-pager';
import { DisclosureTool, ServedToolDefinition, compareNames, servedDefinition } from './disclosure-tool';
import { DisclosureScope } from './disclosure-catalog';
import { META_NAMESPACE } from './meta-tools';
import { disclosureCatalogVersion } from './catalog-version';
import { oneLineSummary, typedStub } from './tool-summary';

export const CODE_MODE_TOOL_NAMES = {
  listFiles: `${META_NAMESPACE}__list_files`,
  readFiles: `${META_NAMESPACE}__read_files`,
  getToolDocs: `${META_NAMESPACE}__get_tool_docs`,
  runScript: `${META_NAMESPACE}__run_script`,
} as const;

export function isCodeModeToolName(name: string): boolean {
  return (Object.values(CODE_MODE_TOOL_NAMES) as string[]).includes(name);
}

/** Default budgets in tokens for code-mode answers, used when the caller gives no `maxTokens`. */
export const CODE_MODE_BUDGETS = {
  listFiles: 1_000,
  readFiles: 2_000,
  readDocs: 4_000,
  runScript: 2_000,
} as const;

export const SERVERS_DIR = 'servers/';
const STUB_EXTENSION = '.d.ts';
const FILE_SUMMARY_CHARS = 80;

/** A directory of the virtual tree: one per server. */
export interface CodeModeDir {
  path: string;
  files: number;
}

/** A stub file of the virtual tree, with its tool's one-line summary. */
export interface CodeModeFile {
  path: string;
  summary?: string;
}

export interface CodeModeFileContent {
  path: string;
  content: string;
}

export type ListFilesAnswer = BudgetedAnswer<{ path: string; dirs?: CodeModeDir[]; files?: CodeModeFile[] }>;
export type ToolDocsAnswer = BudgetedAnswer<{
  tools: ServedToolDefinition[];
  unknown?: string[];
  tooLarge?: { name: string; schemaTokens: number }[];
}>;
export type ReadFilesAnswer = BudgetedAnswer<{
  files: CodeModeFileContent[];
  unknown?: string[];
  tooLarge?: { path: string; tokens: number }[];
}>;

export interface ListFilesRequest {
  /** `servers/` (the servers) or `servers/<server>/` (its stubs); default `servers/`. */
  path?: string;
  /** List every stub below `path` instead of one level. */
  recursive?: boolean;
  maxTokens?: number;
  cursor?: string;
}

export interface ReadFilesRequest {
  /** Stub paths (`servers/github/create_issue.d.ts`) or tool names (`github__create_issue`). */
  paths: readonly string[];
  maxTokens?: number;
  cursor?: string;
}

/** How a script reaches a tool: `<namespace>.<method>(args)`, or `callTool(tool, args)`. */
export interface CodeModeBinding {
  tool: string;
  namespace: string;
  method: string;
}

interface StubEntry {
  tool: DisclosureTool;
  path: string;
  dir: string;
  binding: CodeModeBinding;
  summary: string;
  content?: string;
  contentTokens?: number;
  listTokens?: number;
}

/**
 * Names a script cannot use for a server's object: JavaScript's reserved words and the globals a
 * QuickJS context (and the sandbox prelude) defines. A server named like one gets a trailing `_`.
 */
const RESERVED_IDENTIFIERS = new Set(
  (
    'break case catch class const continue debugger default delete do else enum export extends false finally for function if import in instanceof ' +
    'new null return super switch this throw true try typeof var void while with yield let static implements interface package private protected public await async ' +
    'globalThis console callTool ToolError Object Function Array Number Boolean String Symbol BigInt Math JSON Date RegExp Error EvalError RangeError ' +
    'ReferenceError SyntaxError TypeError URIError AggregateError InternalError Promise Proxy Reflect Map Set WeakMap WeakSet WeakRef FinalizationRegistry ' +
    'ArrayBuffer SharedArrayBuffer DataView Atomics Int8Array Uint8Array Uint8ClampedArray Int16Array Uint16Array Int32Array Uint32Array Float32Array ' +
    'Float64Array BigInt64Array BigUint64Array Iterator eval isFinite isNaN parseFloat parseInt decodeURI decodeURIComponent encodeURI encodeURIComponent ' +
    'escape unescape undefined NaN Infinity arguments queueMicrotask performance'
  ).split(' '),
);

/** A JavaScript identifier for a server or tool name: other characters become `_`. */
export function codeIdentifier(name: string): string {
  const id = name.replace(/[^A-Za-z0-9_$]/g, '_').replace(/^(\d)/, '_$1') || '_';
  return RESERVED_IDENTIFIERS.has(id) ? `${id}_` : id;
}

/**
 * Code mode's virtual file tree: `servers/<server>/<tool>.d.ts`, one typed stub per tool, as a
 * script calls it (`declare namespace github { function create_issue(args: {...}): Promise<unknown>; }`).
 * Built once per catalog version; stubs and their token counts are computed on first read.
 * Listing and reading answer within a token budget and page with a keyset cursor (the path).
 */
export class CodeModeFiles {
  private readonly byPath = new Map<string, StubEntry>();
  private readonly byTool = new Map<string, StubEntry>();
  private readonly sortedPaths: string[];
  private versionMemo: string | undefined;

  constructor(tools: readonly DisclosureTool[]) {
    const taken = new Map<string, Set<string>>();
    for (const tool of [...tools].sort((a, b) => compareNames(a.name, b.name))) {
      const toolName = tool.name.startsWith(`${tool.namespace}__`)
        ? tool.name.slice(tool.namespace.length + 2)
        : tool.name;
      const namespace = codeIdentifier(tool.namespace);
      const methods = taken.get(namespace) ?? new Set<string>();
      taken.set(namespace, methods);
      let method = codeIdentifier(toolName);
      // `get-sum` and `get_sum` would both be `get_sum`: the later one (by name) gets a number.
      for (let n = 2; methods.has(method); n++) method = `${codeIdentifier(toolName)}_${n}`;
      methods.add(method);
      const dir = `${SERVERS_DIR}${tool.namespace}/`;
      const entry: StubEntry = {
        tool,
        path: `${dir}${toolName}${STUB_EXTENSION}`,
        dir,
        binding: { tool: tool.name, namespace, method },
        summary: oneLineSummary(tool.description ?? tool.title, FILE_SUMMARY_CHARS),
      };
      this.byPath.set(entry.path, entry);
      this.byTool.set(tool.name, entry);
    }
    this.sortedPaths = [...this.byPath.keys()].sort(compareNames);
  }

  /** The catalog version its stubs and docs are rendered from (disclosureCatalogVersion), computed on first use. */
  get version(): string {
    this.versionMemo ??= disclosureCatalogVersion([...this.byTool.values()].map((e) => e.tool));
    return this.versionMemo;
  }

  /** How scripts reach the tools the caller may see. */
  bindings(scope: DisclosureScope = {}): CodeModeBinding[] {
    return this.visible(scope).map((e) => e.binding);
  }

  /** The exposed tool name for a stub path or a tool name; undefined if neither. */
  toolNameOf(pathOrName: string): string | undefined {
    return (this.byPath.get(pathOrName) ?? this.byTool.get(pathOrName))?.tool.name;
  }

  listFiles(request: ListFilesRequest, scope: DisclosureScope = {}): { answer: ListFilesAnswer; json: string } {
    const maxTokens = effectiveMaxTokens(request.maxTokens, CODE_MODE_BUDGETS.listFiles, scope.maxTokensCeiling);
    const path = normaliseDir(request.path);
    const after = request.cursor === undefined ? undefined : decodeNameCursor(request.cursor);
    const below = this.visible(scope).filter((e) => e.path.startsWith(path));
    if (path !== SERVERS_DIR && below.length === 0) {
      throw new DisclosureException(
        DisclosureExceptionCode.InvalidRequest,
        `No directory ${path}; list ${SERVERS_DIR} to see the servers.`,
      );
    }
    if (path === SERVERS_DIR && !request.recursive) {
      const counts = new Map<string, number>();
      for (const e of below) counts.set(e.dir, (counts.get(e.dir) ?? 0) + 1);
      const dirs = [...counts.entries()]
        .map(([p, files]) => ({ path: p, files }))
        .filter((d) => after === undefined || compareNames(d.path, after) > 0);
      const page = budgetedPage({
        items: dirs,
        maxTokens,
        render: (d) => d,
        itemTokens: (d) => countJsonTokens(d),
        cursorAfter: (d) => encodeNameCursor(d.path),
        envelope: (rendered) => ({ path, dirs: rendered as CodeModeDir[] }),
      });
      return { answer: page.answer, json: page.json };
    }
    const files = below.filter(
      (e) => (request.recursive || e.dir === path) && (after === undefined || compareNames(e.path, after) > 0),
    );
    const page = budgetedPage({
      items: files,
      maxTokens,
      render: (e) => fileListing(e),
      itemTokens: (e) => (e.listTokens ??= countJsonTokens(fileListing(e))),
      cursorAfter: (e) => encodeNameCursor(e.path),
      envelope: (rendered) => ({ path, files: rendered as CodeModeFile[] }),
    });
    return { answer: page.answer, json: page.json };
  }

  /** Stub files by path (or tool name), in path order; unknown and invisible ones in `unknown`. */
  readFiles(request: ReadFilesRequest, scope: DisclosureScope = {}): { answer: ReadFilesAnswer; json: string } {
    const maxTokens = effectiveMaxTokens(request.maxTokens, CODE_MODE_BUDGETS.readFiles, scope.maxTokensCeiling);
    if (request.paths.length === 0)
      throw new DisclosureException(DisclosureExceptionCode.InvalidRequest, 'paths must name at least one file.');
    const { found, unknown } = this.lookUp(request.paths, scope);
    const after = request.cursor === undefined ? undefined : decodeNameCursor(request.cursor);
    const items = [...found]
      .sort((a, b) => compareNames(a.path, b.path))
      .filter((e) => after === undefined || compareNames(e.path, after) > 0);
    const page = budgetedPage({
      items,
      maxTokens,
      render: (e) => ({ path: e.path, content: this.stub(e) }),
      itemTokens: (e) => (e.contentTokens ??= countJsonTokens({ path: e.path, content: this.stub(e) })),
      cursorAfter: (e) => encodeNameCursor(e.path),
      envelope: (rendered, tooLarge) => {
        const body: {
          files: CodeModeFileContent[];
          unknown?: string[];
          tooLarge?: { path: string; tokens: number }[];
        } = { files: rendered as CodeModeFileContent[] };
        if (unknown.length && request.cursor === undefined) body.unknown = unknown;
        if (tooLarge.length) body.tooLarge = tooLarge.map((e) => ({ path: e.path, tokens: e.contentTokens ?? 0 }));
        return body;
      },
    });
    return { answer: page.answer, json: page.json };
  }

  /** Full definitions (description and JSON schema) by stub path or tool name, in name order. */
  readDocs(request: ReadFilesRequest, scope: DisclosureScope = {}): { answer: ToolDocsAnswer; json: string } {
    const maxTokens = effectiveMaxTokens(request.maxTokens, CODE_MODE_BUDGETS.readDocs, scope.maxTokensCeiling);
    if (request.paths.length === 0)
      throw new DisclosureException(DisclosureExceptionCode.InvalidRequest, 'paths must name at least one tool.');
    const { found, unknown } = this.lookUp(request.paths, scope);
    const after = request.cursor === undefined ? undefined : decodeNameCursor(request.cursor);
    const items = [...found]
      .sort((a, b) => compareNames(a.tool.name, b.tool.name))
      .filter((e) => after === undefined || compareNames(e.tool.name, after) > 0);
    const page = budgetedPage({
      items,
      maxTokens,
      render: (e) => servedDefinition(e.tool),
      itemTokens: (e) => e.tool.schemaTokens ?? countJsonTokens(servedDefinition(e.tool)),
      cursorAfter: (e) => encodeNameCursor(e.tool.name),
      envelope: (rendered, tooLarge) => {
        const body: {
          tools: ServedToolDefinition[];
          unknown?: string[];
          tooLarge?: { name: string; schemaTokens: number }[];
        } = { tools: rendered as ServedToolDefinition[] };
        if (unknown.length && request.cursor === undefined) body.unknown = unknown;
        if (tooLarge.length)
          body.tooLarge = tooLarge.map((e) => ({
            name: e.tool.name,
            schemaTokens: e.tool.schemaTokens ?? countJsonTokens(servedDefinition(e.tool)),
          }));
        return body;
      },
    });
    return { answer: page.answer, json: page.json };
  }

  private lookUp(paths: readonly string[], scope: DisclosureScope): { found: Set<StubEntry>; unknown: string[] } {
    const found = new Set<StubEntry>();
    const unknown: string[] = [];
    for (const p of paths) {
      const entry = this.byPath.get(p) ?? this.byTool.get(p);
      if (entry && (scope.isVisible?.(entry.tool.name) ?? true)) found.add(entry);
      else unknown.push(p);
    }
    return { found, unknown };
  }

  /** The stub file's text. */
  stubOf(pathOrName: string): string | undefined {
    const entry = this.byPath.get(pathOrName) ?? this.byTool.get(pathOrName);
    return entry ? this.stub(entry) : undefined;
  }

  private stub(entry: StubEntry): string {
    if (entry.content === undefined) {
      const fn = typedStub({
        name: entry.binding.method,
        description: entry.tool.description ?? entry.tool.title,
        inputSchema: entry.tool.inputSchema,
      });
      entry.content = `declare namespace ${entry.binding.namespace} {\n${fn.replace(/^/gm, '  ')}\n}\n`;
    }
    return entry.content;
  }

  private visible(scope: DisclosureScope): StubEntry[] {
    const all = this.sortedPaths.map((p) => this.byPath.get(p) as StubEntry);
    return scope.isVisible ? all.filter((e) => scope.isVisible?.(e.tool.name)) : all;
  }
}

function fileListing(e: StubEntry): CodeModeFile {
  return e.summary ? { path: e.path, summary: e.summary } : { path: e.path };
}

function normaliseDir(path: string | undefined): string {
  if (path === undefined || path === '' || path === '/' || path === '.') return SERVERS_DIR;
  const trimmed = path.replace(/^\/+/, '');
  const dir = trimmed.endsWith('/') ? trimmed : `${trimmed}/`;
  if (!dir.startsWith(SERVERS_DIR))
    throw new DisclosureException(
      DisclosureExceptionCode.InvalidRequest,
      `Paths start with ${SERVERS_DIR}; got ${path}.`,
    );
  return dir;
}

/**
 * Sets `tokens` to the count of the JSON that contains it, with one count (o200k splits digits
 * into pre-tokens of at most three, so the number's own cost is ceil(digits / 3)).
 */
export function withOwnTokens<T extends object>(body: T): { answer: T & { tokens: number }; json: string } {
  const base = countTokens(JSON.stringify({ ...body, tokens: 0 })) - 1;
  let tokens = base + 1;
  while (base + Math.ceil(String(tokens).length / 3) !== tokens) tokens = base + Math.ceil(String(tokens).length / 3);
  const answer = { ...body, tokens };
  return { answer, json: JSON.stringify(answer) };
}
