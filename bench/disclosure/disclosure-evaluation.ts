import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DisclosureCatalog, DisclosureTool, ToolSearchOptions, ToolTier } from '@tollgate/disclosure';
import { sha256Hex } from '@tollgate/kernel';
import { countTokens } from '@tollgate/tokens';
import { githubTools, liveMcpBenchTasks, liveMcpBenchTools } from './fixture-catalogs';
import { JudgedQuery, RetrievalFigures, percentile, retrievalFigures, round } from './retrieval-metrics';
import { seededRandom } from './seeded-random';
import { SyntheticQuery, syntheticCatalog } from './synthetic-catalog';

export const SYNTHETIC_SEED = 20_250_401;
export const SYNTHETIC_SERVERS = 60;
export const SYNTHETIC_QUERIES = 100;

interface SingleIntentQuery {
  query: string;
  expected: string;
  /** Other tools that answer the query just as well (e.g. a generic `issue_write` beside `create_issue`). */
  alsoAccepted?: string[];
  /** Absent for the original 104 queries; `added-2` for the second batch (GitHub catalog). */
  set?: string;
}

export type QueryHalf = 'tuning' | 'held-out';

/**
 * A fixed split of the single-intent queries, by a hash of the query text alone: changes to the
 * ranking are tuned on one half and must not hurt the other.
 */
export function queryHalf(query: string): QueryHalf {
  return parseInt(sha256Hex(query).slice(0, 2), 16) % 2 === 0 ? 'tuning' : 'held-out';
}

const QUERIES_FILE = 'single-intent-queries.json';

/** The queries live beside the source; the build copies no JSON, so from dist/ look in bench/. */
export function singleIntentQueries(): SingleIntentQuery[] {
  const candidates = [
    path.resolve(__dirname, QUERIES_FILE),
    path.resolve(__dirname, '../../../bench/disclosure', QUERIES_FILE),
  ];
  const file = candidates.find((candidate) => existsSync(candidate));
  if (!file) throw new Error(`${QUERIES_FILE} not found; looked in ${candidates.join(', ')}`);
  return JSON.parse(readFileSync(file, 'utf8')) as SingleIntentQuery[];
}

/**
 * Tier scores and prices are not in the fixtures. Each tool gets them from a PRNG seeded with
 * its name's hash: skewed scores (a few hot tools, a long cold tail), prices from a short list.
 */
export function withTiersAndPrices(tools: readonly DisclosureTool[]): DisclosureTool[] {
  const prices = [0n, 0n, 100n, 1_000n, 5_000n, 20_000n];
  return tools.map((tool) => {
    const random = seededRandom(parseInt(sha256Hex(tool.name).slice(0, 8), 16));
    const tierScore = round(random() ** 6 * 100, 2);
    const tier: ToolTier = tierScore >= 60 ? 'hot' : tierScore >= 20 ? 'warm' : tierScore >= 2 ? 'standard' : 'cold';
    return { ...tool, tierScore, tier, priceMicros: prices[Math.floor(random() * prices.length)] };
  });
}

export interface CatalogUnderTest {
  label: string;
  tools: DisclosureTool[];
  syntheticQueries: SyntheticQuery[];
}

export function catalogsUnderTest(): CatalogUnderTest[] {
  const github = withTiersAndPrices(githubTools());
  const live = withTiersAndPrices(liveMcpBenchTools());
  const synthetic = syntheticCatalog(SYNTHETIC_SEED, SYNTHETIC_SERVERS, SYNTHETIC_QUERIES);
  const union = [...github, ...live, ...withTiersAndPrices(synthetic.tools)];
  return [
    { label: `github-${github.length}`, tools: github, syntheticQueries: [] },
    { label: `livemcpbench-${live.length}`, tools: live, syntheticQueries: [] },
    { label: `union-${union.length}`, tools: union, syntheticQueries: synthetic.queries },
  ];
}

export interface SizeFigures {
  catalog: string;
  tools: number;
  servers: number;
  plainListTokens: number;
  initialTokens: number;
  hotTools: number;
  initialReductionPct: number;
  tasks: (RetrievalFigures & { unmatchedLabels: number }) | null;
  tasksBaselineBm25: RetrievalFigures | null;
  singleIntent: RetrievalFigures;
  /** The same queries by subset: the original 104, the added batch, and the tuning / held-out halves. */
  singleIntentOriginal: RetrievalFigures;
  singleIntentAdded: RetrievalFigures | null;
  singleIntentTuning: RetrievalFigures;
  singleIntentHeldOut: RetrievalFigures;
  singleIntentHeldOutOriginal: RetrievalFigures;
  singleIntentNoSynonyms: RetrievalFigures;
  singleIntentBaselineBm25: RetrievalFigures;
  synthetic: RetrievalFigures | null;
  agent: { runs: number; succeeded: number; meanTokens: number; p95Tokens: number; maxTokens: number };
  budget: { answers: number; withinBudget: boolean; selfCountExact: boolean };
  answersDigest: string;
}

export interface SizeTimings {
  catalog: string;
  buildMs: number;
  searchP95Ms: number;
  /** Search by a key that sees every other server (a fresh scope per request, as the edge builds it). */
  scopedSearchP95Ms: number;
  schemasP95Ms: number;
  categoriesP95Ms: number;
  allP95Ms: number;
}

/** The baseline the fixtures README measures: one BM25 over all fields, no boosts, no synonyms. */
const PLAIN_BM25: ToolSearchOptions = {
  weights: { name: 1, namespace: 1, title: 1, description: 1, params: 1, context: 1 },
  lengthNormalisation: { name: 0.75, namespace: 0.75, title: 0.75, description: 0.75, params: 0.75, context: 0.75 },
  synonymWeight: 0,
  capSynonymIdf: false,
  coverageBoost: 0,
  nameCoverageBoost: 0,
  actionMismatchPenalty: 0,
};

class AnswerLog {
  answers = 0;
  withinBudget = true;
  selfCountExact = true;
  private readonly digest: string[] = [];

  record(result: { answer: { tokens: number }; json: string }, maxTokens: number): void {
    this.answers++;
    if (result.answer.tokens > maxTokens) this.withinBudget = false;
    if (countTokens(result.json) !== result.answer.tokens) this.selfCountExact = false;
    this.digest.push(result.json);
  }

  hash(): string {
    return sha256Hex(this.digest.join('\n'));
  }
}

const RANK_DEPTH = 10;

export function evaluateSize(under: CatalogUnderTest): { figures: SizeFigures; timings: SizeTimings } {
  const built = performance.now();
  const catalog = new DisclosureCatalog(under.tools);
  const buildMs = performance.now() - built;
  const noSynonyms = new DisclosureCatalog(under.tools, { search: { synonymWeight: 0 } });
  const baseline = new DisclosureCatalog(under.tools, { search: PLAIN_BM25 });
  const log = new AnswerLog();

  const rankWith = (c: DisclosureCatalog, logged: boolean) => (query: string) => {
    const maxTokens = 5_000;
    const result = c.searchTools({ query, limit: RANK_DEPTH, maxTokens });
    if (logged) log.record(result, maxTokens);
    return result.answer.tools.map((t) => t.name);
  };

  // Task labels name tools without their server: any tool of that name satisfies the label.
  const byShortName = new Map<string, string[]>();
  for (const tool of under.tools) {
    const short = tool.name.slice(tool.namespace.length + 2).toLowerCase();
    byShortName.set(short, [...(byShortName.get(short) ?? []), tool.name]);
  }
  const hasLiveMcpBench = under.tools.some((t) => t.namespace === 'yahoo-finance');
  let unmatchedLabels = 0;
  const taskQueries: JudgedQuery[] = [];
  for (const task of liveMcpBenchTasks()) {
    const labels: string[][] = [];
    for (const label of task.labels) {
      const names = byShortName.get(label.toLowerCase());
      if (names) labels.push(names);
      else unmatchedLabels++;
    }
    if (labels.length) taskQueries.push({ query: task.question, labels });
  }
  const single = singleIntentQueries().filter((q) => catalog.has(q.expected));
  const judge = (qs: readonly SingleIntentQuery[]): JudgedQuery[] =>
    qs.map((q) => ({
      query: q.query,
      labels: [[q.expected, ...(q.alsoAccepted ?? []).filter((n) => catalog.has(n))]],
    }));
  const singleJudged = judge(single);
  const original = single.filter((q) => q.set === undefined);
  const added = single.filter((q) => q.set !== undefined);
  const heldOut = single.filter((q) => queryHalf(q.query) === 'held-out');
  const syntheticJudged: JudgedQuery[] = under.syntheticQueries.map((q) => ({
    query: q.query,
    labels: [[q.expected]],
  }));

  const figures: SizeFigures = {
    catalog: under.label,
    tools: catalog.size,
    servers: new Set(under.tools.map((t) => t.namespace)).size,
    plainListTokens: catalog.plainToolList().tokens,
    initialTokens: 0,
    hotTools: 0,
    initialReductionPct: 0,
    tasks: hasLiveMcpBench ? { ...retrievalFigures(taskQueries, rankWith(catalog, true)), unmatchedLabels } : null,
    tasksBaselineBm25: hasLiveMcpBench ? retrievalFigures(taskQueries, rankWith(baseline, false)) : null,
    singleIntent: retrievalFigures(singleJudged, rankWith(catalog, true)),
    singleIntentOriginal: retrievalFigures(judge(original), rankWith(catalog, false)),
    singleIntentAdded: added.length ? retrievalFigures(judge(added), rankWith(catalog, false)) : null,
    singleIntentTuning: retrievalFigures(
      judge(single.filter((q) => queryHalf(q.query) === 'tuning')),
      rankWith(catalog, false),
    ),
    singleIntentHeldOut: retrievalFigures(judge(heldOut), rankWith(catalog, false)),
    singleIntentHeldOutOriginal: retrievalFigures(
      judge(heldOut.filter((q) => q.set === undefined)),
      rankWith(catalog, false),
    ),
    singleIntentNoSynonyms: retrievalFigures(singleJudged, rankWith(noSynonyms, false)),
    singleIntentBaselineBm25: retrievalFigures(singleJudged, rankWith(baseline, false)),
    synthetic: syntheticJudged.length ? retrievalFigures(syntheticJudged, rankWith(catalog, true)) : null,
    agent: { runs: 0, succeeded: 0, meanTokens: 0, p95Tokens: 0, maxTokens: 0 },
    budget: { answers: 0, withinBudget: true, selfCountExact: true },
    answersDigest: '',
  };
  const initial = catalog.initialToolList();
  figures.initialTokens = initial.tokens;
  figures.hotTools = initial.hot.length;
  figures.initialReductionPct = round((1 - initial.tokens / figures.plainListTokens) * 100, 1);

  figures.agent = scriptedAgent(catalog, single, initial.hot, initial.tokens, log);
  exercisePaging(catalog, single, log);

  figures.budget = { answers: log.answers, withinBudget: log.withinBudget, selfCountExact: log.selfCountExact };
  figures.answersDigest = log.hash().slice(0, 16);
  const timings = timeMetaTools(catalog, under.tools, [
    ...single.map((q) => q.query),
    ...taskQueries.map((q) => q.query),
    ...under.syntheticQueries.map((q) => q.query),
  ]);
  return { figures, timings: { catalog: under.label, buildMs: round(buildMs, 1), ...timings } };
}

/**
 * A scripted agent per single-intent query: connect (read the initial tools/list); done if the
 * tool is hot; else search (default budget), following the cursor for up to two more pages;
 * then fetch the schema. Counts every token it reads until it holds an invocation-ready schema.
 */
function scriptedAgent(
  catalog: DisclosureCatalog,
  queries: readonly SingleIntentQuery[],
  hot: readonly string[],
  initialTokens: number,
  log: AnswerLog,
): SizeFigures['agent'] {
  const spent: number[] = [];
  let succeeded = 0;
  for (const q of queries) {
    let tokens = initialTokens;
    let found = hot.includes(q.expected);
    let cursor: string | undefined;
    for (let page = 0; !found && page < 3; page++) {
      const result = catalog.searchTools({ query: q.query, cursor });
      log.record(result, 1_000);
      tokens += result.answer.tokens;
      found = result.answer.tools.some((t) => t.name === q.expected);
      cursor = result.answer.cursor;
      if (!cursor) break;
    }
    if (found && !hot.includes(q.expected)) {
      const schemas = catalog.getToolSchemas({ names: [q.expected] });
      log.record(schemas, 4_000);
      tokens += schemas.answer.tokens;
      found = schemas.answer.tools.length === 1;
    }
    if (found) succeeded++;
    spent.push(tokens);
  }
  return {
    runs: queries.length,
    succeeded,
    meanTokens: Math.round(spent.reduce((a, b) => a + b, 0) / Math.max(1, spent.length)),
    p95Tokens: percentile(spent, 95),
    maxTokens: Math.max(0, ...spent),
  };
}

/** Small budgets and cursors: every page must fit, whatever the budget. */
function exercisePaging(catalog: DisclosureCatalog, queries: readonly SingleIntentQuery[], log: AnswerLog): void {
  for (const q of queries.slice(0, 20)) {
    let cursor: string | undefined;
    for (let page = 0; page < 4; page++) {
      const result = catalog.searchTools({ query: q.query, maxTokens: 250, cursor });
      log.record(result, 250);
      cursor = result.answer.cursor;
      if (!cursor) break;
    }
  }
  const names = queries.slice(0, 12).map((q) => q.expected);
  let cursor: string | undefined;
  for (let page = 0; page < 12; page++) {
    const result = catalog.getToolSchemas({ names, maxTokens: 700, cursor });
    log.record(result, 700);
    cursor = result.answer.cursor;
    if (!cursor) break;
  }
  for (const maxTokens of [120, 300, 800]) {
    cursor = undefined;
    for (let page = 0; page < 20; page++) {
      const result = catalog.listCategories({ maxTokens, cursor });
      log.record(result, maxTokens);
      cursor = result.answer.cursor;
      if (!cursor) break;
    }
  }
}

const TIMING_PASSES = 3;

function timeMetaTools(
  catalog: DisclosureCatalog,
  tools: readonly DisclosureTool[],
  queries: readonly string[],
): Omit<SizeTimings, 'catalog' | 'buildMs'> {
  const search: number[] = [];
  const scopedSearch: number[] = [];
  const schemas: number[] = [];
  const servers = [...new Set(tools.map((t) => t.namespace))].sort();
  const shown = new Set(servers.filter((_, i) => i % 2 === 0));
  const categories: number[] = [];
  for (let pass = 0; pass < TIMING_PASSES; pass++) {
    const warmUp = pass === 0;
    for (const query of queries) {
      let t = performance.now();
      const found = catalog.searchTools({ query });
      if (!warmUp) search.push(performance.now() - t);
      t = performance.now();
      catalog.searchTools({ query }, { isVisible: (name) => shown.has(name.slice(0, name.indexOf('__'))) });
      if (!warmUp) scopedSearch.push(performance.now() - t);
      const names = found.answer.tools.slice(0, 3).map((tool) => tool.name);
      if (names.length) {
        t = performance.now();
        catalog.getToolSchemas({ names });
        if (!warmUp) schemas.push(performance.now() - t);
      }
      t = performance.now();
      catalog.listCategories();
      if (!warmUp) categories.push(performance.now() - t);
    }
  }
  return {
    searchP95Ms: round(percentile(search, 95), 2),
    scopedSearchP95Ms: round(percentile(scopedSearch, 95), 2),
    schemasP95Ms: round(percentile(schemas, 95), 2),
    categoriesP95Ms: round(percentile(categories, 95), 2),
    allP95Ms: round(percentile([...search, ...schemas, ...categories], 95), 2),
  };
}
