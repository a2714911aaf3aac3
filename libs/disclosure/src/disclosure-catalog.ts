import { sha256Hex, stableStringify } from '@tollgate/kernel';
import { disclosureCatalogVersion } from './catalog-version';
import { countJsonTokens } from '@tollgate/tokens';
import { decodeNameCursor, decodeSearchCursor, encodeNameCursor, encodeSearchCursor } from './disclosure-cursor';
import { DisclosureException, DisclosureExceptionCode } from './disclosure.exception';
import { budgetedPage, BudgetedAnswer, effectiveMaxTokens } from './disclosure-pager';
import { DisclosureTool, ServedToolDefinition, ToolTier, compareNames, servedDefinition } from './disclosure-tool';
import { pickHotList } from './hot-list';
import { META_TOOL_DEFINITIONS } from './meta-tools';
import { compareHits, SearchHit, ToolSearchIndex, ToolSearchOptions } from './tool-search-index';
import {
  DEFAULT_SUMMARY_CHARS,
  guessCategory,
  oneLineSummary,
  parameterSignature,
  simplifyParameters,
  typedStub,
} from './tool-summary';

/** Default budgets in tokens, used when the caller gives no `maxTokens`. */
export const DEFAULT_DISCLOSURE_BUDGETS = {
  initial: 1_500,
  categories: 800,
  search: 1_000,
  schemas: 4_000,
} as const;

export const DEFAULT_SEARCH_LIMIT = 10;
export const MAX_SEARCH_LIMIT = 50;

/** What one caller may see and spend: the policy's ceiling and the tools it allows. */
export interface DisclosureScope {
  /** Policy ceiling on any one answer, in tokens. */
  maxTokensCeiling?: number;
  /** Whether the caller may see (and so discover) a tool; everything when absent. */
  isVisible?: (name: string) => boolean;
}

export interface DisclosureCatalogOptions {
  summaryChars?: number;
  search?: ToolSearchOptions;
}

/** A T2 search result. */
export interface ToolSummary {
  name: string;
  summary: string;
  params: string;
  schemaTokens: number;
  priceMicros?: string;
  tier?: ToolTier;
}

export interface CategorySummary {
  name: string;
  tools: number;
  servers: string[];
}

export interface TooLargeEntry {
  name: string;
  schemaTokens: number;
}

export type CategoriesAnswer = BudgetedAnswer<{ categories: CategorySummary[] }>;
export type SearchAnswer = BudgetedAnswer<{ tools: ToolSummary[] }>;
export type SchemasAnswer = BudgetedAnswer<{
  tools: ServedToolDefinition[];
  unknown?: string[];
  tooLarge?: TooLargeEntry[];
}>;

/** An answer with the exact JSON its `tokens` were counted on. */
export interface DisclosureResult<A> {
  answer: A;
  json: string;
}

export interface InitialToolList {
  tools: ServedToolDefinition[];
  hot: string[];
  /** Tokens of `{"tools":[...]}` as `tools/list` returns it. */
  tokens: number;
}

export interface SearchRequest {
  query: string;
  category?: string;
  server?: string;
  limit?: number;
  maxTokens?: number;
  cursor?: string;
}

export interface SchemasRequest {
  names: readonly string[];
  maxTokens?: number;
  cursor?: string;
}

export interface PageRequest {
  maxTokens?: number;
  cursor?: string;
}

interface CatalogEntry {
  tool: DisclosureTool;
  category: string;
  schemaTokens: number;
  summary: ToolSummary;
  summaryTokens: number;
}

/**
 * One catalog version as progressive disclosure serves it: the hot list (T0), categories (T1),
 * ranked search with summaries (T2) and full schemas (T3), every answer within its budget.
 * Built once per catalog version (summaries, token counts and the search index are computed
 * here), then read-only.
 */
export class DisclosureCatalog {
  private readonly entries = new Map<string, CatalogEntry>();
  private readonly index: ToolSearchIndex;
  private versionMemo: string | undefined;

  constructor(tools: readonly DisclosureTool[], options: DisclosureCatalogOptions = {}) {
    const summaryChars = options.summaryChars ?? DEFAULT_SUMMARY_CHARS;
    for (const tool of [...tools].sort((a, b) => compareNames(a.name, b.name))) {
      if (this.entries.has(tool.name)) {
        throw new DisclosureException(
          DisclosureExceptionCode.InvalidRequest,
          `Tool ${tool.name} appears twice in the catalog.`,
        );
      }
      const schemaTokens = tool.schemaTokens ?? countJsonTokens(servedDefinition(tool));
      const summary: ToolSummary = {
        name: tool.name,
        summary: oneLineSummary(tool.description ?? tool.title, summaryChars),
        params: parameterSignature(simplifyParameters(tool.inputSchema)),
        schemaTokens,
      };
      if (tool.priceMicros !== undefined) summary.priceMicros = tool.priceMicros.toString();
      if (tool.tier !== undefined) summary.tier = tool.tier;
      this.entries.set(tool.name, {
        tool,
        category: guessCategory(tool),
        schemaTokens,
        summary,
        summaryTokens: countJsonTokens(summary),
      });
    }
    this.index = new ToolSearchIndex(
      [...this.entries.values()].map((e) => e.tool),
      (tool) => this.entries.get(tool.name)?.category ?? guessCategory(tool),
      options.search,
    );
  }

  get size(): number {
    return this.entries.size;
  }

  /** The catalog version its answers are rendered from (disclosureCatalogVersion), computed on first use. */
  get version(): string {
    this.versionMemo ??= disclosureCatalogVersion([...this.entries.values()].map((e) => e.tool));
    return this.versionMemo;
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** Every tool as a plain `tools/list` serves it (the full mode, and the baseline it is compared with). */
  plainToolList(scope: DisclosureScope = {}): InitialToolList {
    const tools = this.visibleEntries(scope).map((e) => servedDefinition(e.tool));
    return { tools, hot: [], tokens: countJsonTokens({ tools }) };
  }

  /**
   * The progressive mode's `tools/list`: meta-tools plus the hottest tools that fit in what the
   * budget leaves, counted exactly as sent.
   */
  initialToolList(
    scope: DisclosureScope = {},
    maxTokens: number = DEFAULT_DISCLOSURE_BUDGETS.initial,
  ): InitialToolList {
    const budget = effectiveMaxTokens(maxTokens, DEFAULT_DISCLOSURE_BUDGETS.initial, scope.maxTokensCeiling);
    const metaTokens = countJsonTokens({ tools: META_TOOL_DEFINITIONS });
    if (metaTokens > budget) {
      throw new DisclosureException(
        DisclosureExceptionCode.BudgetTooSmall,
        `The meta-tools alone take ${metaTokens} tokens.`,
        { maxTokens: budget, minimum: metaTokens },
      );
    }
    const candidates = this.visibleEntries(scope).map((e) => ({
      name: e.tool.name,
      tierScore: e.tool.tierScore,
      schemaTokens: e.schemaTokens,
      tool: e.tool,
    }));
    const hot = pickHotList(candidates, budget - metaTokens).tools;
    for (;;) {
      const tools = [...hot.map((h) => servedDefinition(h.tool)), ...META_TOOL_DEFINITIONS];
      const tokens = countJsonTokens({ tools });
      if (tokens <= budget || hot.length === 0) return { tools, hot: hot.map((h) => h.name), tokens };
      hot.pop();
    }
  }

  /** T1: categories with their servers and tool counts, by name. */
  listCategories(request: PageRequest = {}, scope: DisclosureScope = {}): DisclosureResult<CategoriesAnswer> {
    const maxTokens = effectiveMaxTokens(
      request.maxTokens,
      DEFAULT_DISCLOSURE_BUDGETS.categories,
      scope.maxTokensCeiling,
    );
    const groups = new Map<string, { tools: number; servers: Set<string> }>();
    for (const entry of this.visibleEntries(scope)) {
      let group = groups.get(entry.category);
      if (!group) groups.set(entry.category, (group = { tools: 0, servers: new Set() }));
      group.tools++;
      group.servers.add(entry.tool.namespace);
    }
    let categories: CategorySummary[] = [...groups.entries()]
      .map(([name, g]) => ({ name, tools: g.tools, servers: [...g.servers].sort(compareNames) }))
      .sort((a, b) => compareNames(a.name, b.name));
    if (request.cursor !== undefined) {
      const after = decodeNameCursor(request.cursor);
      categories = categories.filter((c) => compareNames(c.name, after) > 0);
    }
    const page = budgetedPage({
      items: categories,
      maxTokens,
      render: (c) => c,
      itemTokens: (c) => this.cachedTokens(c),
      cursorAfter: (c) => encodeNameCursor(c.name),
      envelope: (rendered) => ({ categories: rendered as CategorySummary[] }),
    });
    return { answer: page.answer, json: page.json };
  }

  /** T2: ranked search with one-line summaries, filterable by category and server. */
  searchTools(request: SearchRequest, scope: DisclosureScope = {}): DisclosureResult<SearchAnswer> {
    const maxTokens = effectiveMaxTokens(request.maxTokens, DEFAULT_DISCLOSURE_BUDGETS.search, scope.maxTokensCeiling);
    const limit = Math.min(request.limit ?? DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT);
    if (!Number.isInteger(limit) || limit < 1) {
      throw new DisclosureException(DisclosureExceptionCode.InvalidRequest, 'limit must be a positive integer.');
    }
    const filter = { category: request.category, namespace: request.server };
    const check = sha256Hex(stableStringify({ q: request.query, ...filter })).slice(0, 6);
    // Ranked with statistics of the tools this caller may see only, so its scores and cursor
    // reveal nothing of the others.
    const view = this.index.view(scope.isVisible);
    const terms = this.index.queryTerms(request.query);
    let stats = this.index.stats(terms, view);
    let after: SearchHit | undefined;
    if (request.cursor !== undefined) {
      const cursor = decodeSearchCursor(request.cursor);
      if (
        cursor.check !== check ||
        cursor.stats.docFrequencies.length !== terms.length ||
        cursor.stats.avgLengths.length !== stats.avgLengths.length
      ) {
        throw new DisclosureException(
          DisclosureExceptionCode.InvalidCursor,
          'The cursor belongs to another query; repeat the search without it.',
        );
      }
      ({ stats, after } = cursor);
    }
    let hits = this.index.search(terms, filter, view, stats);
    if (after) {
      const key = after;
      hits = hits.filter((h) => compareHits(h, key) > 0);
    }
    const frozen = stats;
    const page = budgetedPage({
      items: hits,
      maxTokens,
      limit,
      render: (h) => this.entry(h.name).summary,
      itemTokens: (h) => this.entry(h.name).summaryTokens,
      cursorAfter: (h) => encodeSearchCursor({ check, after: h, stats: frozen }),
      envelope: (rendered) => ({ tools: rendered as ToolSummary[] }),
    });
    return { answer: page.answer, json: page.json };
  }

  /**
   * T3: full definitions of the named tools, by name. Names the caller may not see are reported
   * as unknown, exactly like names that do not exist.
   */
  getToolSchemas(request: SchemasRequest, scope: DisclosureScope = {}): DisclosureResult<SchemasAnswer> {
    const maxTokens = effectiveMaxTokens(request.maxTokens, DEFAULT_DISCLOSURE_BUDGETS.schemas, scope.maxTokensCeiling);
    const names = [...new Set(request.names)].sort(compareNames);
    const visible = (name: string) => this.entries.has(name) && (scope.isVisible?.(name) ?? true);
    const unknown = names.filter((n) => !visible(n));
    let known = names.filter(visible).map((n) => this.entry(n));
    if (request.cursor !== undefined) {
      const after = decodeNameCursor(request.cursor);
      known = known.filter((e) => compareNames(e.tool.name, after) > 0);
    }
    const page = budgetedPage({
      items: known,
      maxTokens,
      render: (e) => servedDefinition(e.tool),
      itemTokens: (e) => e.schemaTokens,
      cursorAfter: (e) => encodeNameCursor(e.tool.name),
      envelope: (rendered, tooLarge) => {
        const body: { tools: ServedToolDefinition[]; unknown?: string[]; tooLarge?: TooLargeEntry[] } = {
          tools: rendered as ServedToolDefinition[],
        };
        if (unknown.length && request.cursor === undefined) body.unknown = unknown;
        if (tooLarge.length) body.tooLarge = tooLarge.map((e) => ({ name: e.tool.name, schemaTokens: e.schemaTokens }));
        return body;
      },
    });
    return { answer: page.answer, json: page.json };
  }

  /** The TypeScript declaration of a tool for code mode. */
  typedStub(name: string): string {
    return typedStub(this.entry(name).tool);
  }

  /** The category a tool is listed under (given or guessed). */
  categoryOf(name: string): string {
    return this.entry(name).category;
  }

  private readonly itemTokenCache = new Map<string, number>();

  private cachedTokens(value: unknown): number {
    const json = JSON.stringify(value);
    let tokens = this.itemTokenCache.get(json);
    if (tokens === undefined) {
      tokens = countJsonTokens(value);
      if (this.itemTokenCache.size > 10_000) this.itemTokenCache.clear();
      this.itemTokenCache.set(json, tokens);
    }
    return tokens;
  }

  private visibleEntries(scope: DisclosureScope): CatalogEntry[] {
    const all = [...this.entries.values()];
    return scope.isVisible ? all.filter((e) => scope.isVisible?.(e.tool.name)) : all;
  }

  private entry(name: string): CatalogEntry {
    const entry = this.entries.get(name);
    if (!entry) throw new DisclosureException(DisclosureExceptionCode.InvalidRequest, `No tool named ${name}.`);
    return entry;
  }
}
