import { DisclosureTool, compareNames } from './disclosure-tool';
import { analyze, buildActionMap, buildSynonymMap } from './search-text';
import { SearchView } from './tool-search-view';

/** Fields a tool is indexed under, in this order everywhere (weights, lengths, stats). */
export const SEARCH_FIELDS = ['name', 'namespace', 'title', 'description', 'params', 'context'] as const;
export type SearchField = (typeof SEARCH_FIELDS)[number];

export interface SearchFieldWeights {
  name: number;
  namespace: number;
  title: number;
  description: number;
  params: number;
  context: number;
}

export interface ToolSearchOptions {
  /** BM25F field boosts. */
  weights?: Partial<SearchFieldWeights>;
  /** Length normalisation per field (BM25 `b`). */
  lengthNormalisation?: Partial<SearchFieldWeights>;
  /** BM25 term-frequency saturation. */
  k1?: number;
  /** Weight of a synonym relative to the user's own word; 0 turns synonyms off. */
  synonymWeight?: number;
  /** Cap a synonym's IDF at the IDF of the word the user typed (a synonym never outweighs it). */
  capSynonymIdf?: boolean;
  /** Boost for the IDF-weighted fraction of the user's words a tool matches (any field). */
  coverageBoost?: number;
  /** Boost for the fraction of the tool name's words the query matches. */
  nameCoverageBoost?: number;
  /** Score factor lost when the query's action (create, delete, update, read) differs from the tool name's. */
  actionMismatchPenalty?: number;
}

export const DEFAULT_SEARCH_WEIGHTS: SearchFieldWeights = {
  name: 4,
  namespace: 2,
  title: 1.5,
  description: 1,
  params: 0.3,
  context: 0.3,
};

const DEFAULT_LENGTH_NORMALISATION: SearchFieldWeights = {
  name: 0.3,
  namespace: 0.3,
  title: 0.5,
  description: 0.75,
  params: 0.75,
  context: 0.75,
};

export interface SearchFilter {
  category?: string;
  namespace?: string;
}

/** A weighted query term after analysis and synonym expansion. */
export interface QueryTerm {
  term: string;
  weight: number;
  /** Index (in the same list) of the user's word this term stands for: itself, or the word a synonym expands. */
  source?: number;
}

/**
 * Collection statistics a ranking used, over the tools the caller may see (never the others). A
 * cursor carries them so that the next page ranks the surviving tools exactly as the first page
 * did, even if tools were added or removed meanwhile.
 */
export interface SearchStats {
  docCount: number;
  /** Average length per field, rounded to one decimal. */
  avgLengths: number[];
  /** Document frequency of each query term, in `QueryTerm` order. */
  docFrequencies: number[];
}

export interface SearchHit {
  name: string;
  /** BM25F score in millionths, an integer so that rankings and cursors compare exactly. */
  score: number;
}

interface Posting {
  doc: number;
  /** Term frequency per field, `SEARCH_FIELDS` order. */
  tf: number[];
}

interface IndexedTool {
  name: string;
  namespace: string;
  category: string;
  lengths: number[];
  /** Distinct terms of the name field. */
  nameTerms: number;
  /** Action class of the name's first word, if it is a known verb. */
  action: string | undefined;
}

const SCORE_SCALE = 1_000_000;
/** Views kept per index (one per distinct visible set); the least recently used goes first. */
const VIEW_CACHE_SIZE = 64;
/**
 * Ranked retrieval over a catalog: BM25F over the tool's name (split at snake_case, kebab-case
 * and camelCase), server, title, description, parameter names and descriptions, and context
 * (category, server description). Deterministic: ties are broken by name.
 */
export class ToolSearchIndex {
  private readonly docs: IndexedTool[] = [];
  private readonly postings = new Map<string, Posting[]>();
  /** Every document visible: the view of a caller without restrictions. */
  private readonly everything: SearchView;
  /** Views by visible set (the set's bitmap as a string), shared by callers that see the same tools. */
  private readonly views = new Map<string, SearchView>();
  private readonly weights: number[];
  private readonly lengthNorm: number[];
  private readonly k1: number;
  private readonly synonymWeight: number;
  private readonly synonyms: Map<string, string[]>;
  private readonly capSynonymIdf: boolean;
  private readonly coverageBoost: number;
  private readonly nameCoverageBoost: number;
  private readonly actionMismatchPenalty: number;
  private readonly actions = buildActionMap();

  constructor(
    tools: readonly DisclosureTool[],
    categoryOf: (tool: DisclosureTool) => string,
    options: ToolSearchOptions = {},
  ) {
    const weights = { ...DEFAULT_SEARCH_WEIGHTS, ...options.weights };
    const norm = { ...DEFAULT_LENGTH_NORMALISATION, ...options.lengthNormalisation };
    this.weights = SEARCH_FIELDS.map((f) => weights[f]);
    this.lengthNorm = SEARCH_FIELDS.map((f) => norm[f]);
    this.k1 = options.k1 ?? 1.2;
    this.synonymWeight = options.synonymWeight ?? 0.5;
    this.synonyms = this.synonymWeight > 0 ? buildSynonymMap() : new Map();
    this.capSynonymIdf = options.capSynonymIdf ?? true;
    this.coverageBoost = options.coverageBoost ?? 1;
    this.nameCoverageBoost = options.nameCoverageBoost ?? 0.3;
    this.actionMismatchPenalty = options.actionMismatchPenalty ?? 0.2;

    const sorted = [...tools].sort((a, b) => compareNames(a.name, b.name));
    const totals = SEARCH_FIELDS.map(() => 0);
    for (const tool of sorted) {
      const category = categoryOf(tool);
      const fields = fieldTexts(tool, category).map(analyze);
      const doc = this.docs.length;
      this.docs.push({
        name: tool.name,
        namespace: tool.namespace,
        category,
        lengths: fields.map((terms) => terms.length),
        nameTerms: new Set(fields[0]).size,
        action: this.actions.get(fields[0][0] ?? ''),
      });
      const counts = new Map<string, number[]>();
      fields.forEach((terms, f) => {
        totals[f] += terms.length;
        for (const term of terms) {
          let tf = counts.get(term);
          if (!tf) counts.set(term, (tf = SEARCH_FIELDS.map(() => 0)));
          tf[f]++;
        }
      });
      for (const [term, tf] of counts) {
        let list = this.postings.get(term);
        if (!list) this.postings.set(term, (list = []));
        list.push({ doc, tf });
      }
    }
    this.everything = new SearchView(undefined, this.docs.length, averageLengths(totals, this.docs.length));
  }

  get size(): number {
    return this.docs.length;
  }

  /**
   * The view of a caller who sees the tools `isVisible` accepts (everything when absent). Callers
   * with the same visible set share one view, computed once per index.
   */
  view(isVisible?: (name: string) => boolean): SearchView {
    if (!isVisible) return this.everything;
    const visible = new Uint8Array(this.docs.length);
    let count = 0;
    for (let doc = 0; doc < this.docs.length; doc++) {
      if (isVisible(this.docs[doc].name)) {
        visible[doc] = 1;
        count++;
      }
    }
    if (count === this.docs.length) return this.everything;
    const key = bitmapKey(visible);
    let view = this.views.get(key);
    if (view) {
      // Most recently used last, so the eviction below drops the least recently used.
      this.views.delete(key);
    } else {
      const totals = SEARCH_FIELDS.map(() => 0);
      for (let doc = 0; doc < this.docs.length; doc++) {
        if (!visible[doc]) continue;
        this.docs[doc].lengths.forEach((length, f) => (totals[f] += length));
      }
      view = new SearchView(visible, count, averageLengths(totals, count));
      if (this.views.size >= VIEW_CACHE_SIZE) this.views.delete(this.views.keys().next().value as string);
    }
    this.views.set(key, view);
    return view;
  }

  /** The query's terms: the user's words at weight 1, synonyms of them at `synonymWeight`. */
  queryTerms(query: string): QueryTerm[] {
    const own = [...new Set(analyze(query))];
    const terms: QueryTerm[] = own.map((term, source) => ({ term, weight: 1, source }));
    // The user's own words first, then synonyms: the order (and so the cursor's statistics) is stable.
    const seen = new Set(own);
    own.forEach((term, source) => {
      for (const synonym of this.synonyms.get(term) ?? []) {
        if (seen.has(synonym)) continue;
        seen.add(synonym);
        terms.push({ term: synonym, weight: this.synonymWeight, source });
      }
    });
    return terms;
  }

  /** Statistics of the live catalog for these terms, over the tools of `view` only. */
  stats(terms: readonly QueryTerm[], view: SearchView = this.everything): SearchStats {
    return {
      docCount: view.docCount,
      avgLengths: [...view.avgLengths],
      docFrequencies: terms.map(({ term }) => view.docFrequency(term, this.postings.get(term))),
    };
  }

  /**
   * The tools of `view` matching the query, best first (score descending, then name). With
   * `stats`, the ranking uses those frozen statistics instead of the live ones (see `SearchStats`).
   */
  search(
    terms: readonly QueryTerm[],
    filter: SearchFilter = {},
    view: SearchView = this.everything,
    stats: SearchStats = this.stats(terms, view),
  ): SearchHit[] {
    const scores = new Float64Array(this.docs.length);
    const touched: number[] = [];
    const { docCount, avgLengths, docFrequencies } = stats;
    const idfs = terms.map((_, i) => {
      const df = docFrequencies[i] ?? 0;
      return Math.log(1 + (docCount - df + 0.5) / (df + 0.5));
    });
    const sourceOf = (i: number) => terms[i].source ?? i;
    if (this.capSynonymIdf) {
      // A synonym stands in for the user's word: it may not carry more weight than that word would.
      // (A word absent from the catalog keeps its synonyms' own IDF.)
      terms.forEach((_, i) => {
        const source = sourceOf(i);
        if (source !== i && (docFrequencies[source] ?? 0) > 0) idfs[i] = Math.min(idfs[i], idfs[source]);
      });
    }
    // Coverage: per user word, the best weight (own 1, synonym lower) with which the tool matched it.
    const coverage = this.coverageBoost > 0 ? new Float64Array(this.docs.length) : undefined;
    const nameCover = this.nameCoverageBoost > 0 ? new Float64Array(this.docs.length) : undefined;
    const credited = coverage ? new Int32Array(this.docs.length).fill(-1) : undefined;
    let coverageMass = 0;
    const sourceMass = new Map<number, number>();
    // Each user word's terms together (its own word first), so that coverage credits a word once.
    const order = terms.map((_, i) => i).sort((a, b) => sourceOf(a) - sourceOf(b) || a - b);
    for (const i of order) {
      const { term, weight } = terms[i];
      const postings = this.postings.get(term);
      // A term only hidden tools have is absent for this caller (it would dilute coverage).
      if (!postings || view.docFrequency(term, postings) === 0) continue;
      const idf = idfs[i];
      if (idf <= 0) continue;
      const source = sourceOf(i);
      if (coverage && !sourceMass.has(source)) {
        const mass = idfs[source] > 0 ? idfs[source] : idf;
        sourceMass.set(source, mass);
        coverageMass += mass;
      }
      for (const { doc, tf } of postings) {
        if (!view.sees(doc)) continue;
        const lengths = this.docs[doc].lengths;
        let pseudoTf = 0;
        for (let f = 0; f < tf.length; f++) {
          if (tf[f] === 0) continue;
          const avg = avgLengths[f] || 1;
          pseudoTf += (this.weights[f] * tf[f]) / (1 - this.lengthNorm[f] + (this.lengthNorm[f] * lengths[f]) / avg);
        }
        if (scores[doc] === 0) touched.push(doc);
        scores[doc] += weight * idf * ((pseudoTf * (this.k1 + 1)) / (this.k1 + pseudoTf));
        if (coverage && credited && credited[doc] !== source) {
          // The first (heaviest) of a word's terms a tool matches is the one credited.
          credited[doc] = source;
          coverage[doc] += weight * (sourceMass.get(source) ?? 0);
        }
        if (nameCover && tf[0] > 0) nameCover[doc] += weight;
      }
    }
    // The user's action, when their own words name exactly one.
    const queryActions = new Set<string>();
    terms.forEach(({ term }, i) => {
      const action = sourceOf(i) === i ? this.actions.get(term) : undefined;
      if (action) queryActions.add(action);
    });
    const queryAction = this.actionMismatchPenalty > 0 && queryActions.size === 1 ? [...queryActions][0] : undefined;
    const hits: SearchHit[] = [];
    for (const doc of touched) {
      const tool = this.docs[doc];
      if (filter.category !== undefined && tool.category.toLowerCase() !== filter.category.toLowerCase()) continue;
      if (filter.namespace !== undefined && tool.namespace !== filter.namespace) continue;
      let boost = 1;
      if (coverage && coverageMass > 0) boost += (this.coverageBoost * coverage[doc]) / coverageMass;
      if (nameCover && tool.nameTerms > 0)
        boost += this.nameCoverageBoost * Math.min(1, nameCover[doc] / tool.nameTerms);
      if (queryAction && tool.action && tool.action !== queryAction) boost *= 1 - this.actionMismatchPenalty;
      const score = Math.round(scores[doc] * boost * SCORE_SCALE);
      if (score > 0) hits.push({ name: tool.name, score });
    }
    return hits.sort(compareHits);
  }
}

/** Ranking order: higher score first, then name. */
export function compareHits(a: SearchHit, b: SearchHit): number {
  return b.score - a.score || compareNames(a.name, b.name);
}

function roundTenth(n: number): number {
  return Math.round(n * 10) / 10;
}

function averageLengths(totals: readonly number[], docCount: number): number[] {
  return totals.map((total) => roundTenth(docCount ? total / docCount : 0));
}

/** A visible set as a compact exact key: 16 documents per UTF-16 code unit. */
function bitmapKey(visible: Uint8Array): string {
  const units: number[] = [];
  for (let start = 0; start < visible.length; start += 16) {
    let unit = 0;
    for (let bit = 0; bit < 16 && start + bit < visible.length; bit++) unit |= visible[start + bit] << bit;
    units.push(unit);
  }
  let key = '';
  for (let i = 0; i < units.length; i += 4096) key += String.fromCharCode(...units.slice(i, i + 4096));
  return key;
}

function fieldTexts(tool: DisclosureTool, category: string): string[] {
  const prefix = `${tool.namespace}__`;
  const shortName = tool.name.startsWith(prefix) ? tool.name.slice(prefix.length) : tool.name;
  const title = typeof tool.annotations?.['title'] === 'string' ? (tool.annotations['title'] as string) : '';
  return [
    shortName,
    tool.namespace,
    tool.title ?? title,
    tool.description ?? '',
    parameterText(tool.inputSchema),
    `${category} ${tool.serverDescription ?? ''}`,
  ];
}

function parameterText(schema: Record<string, unknown>): string {
  const properties = schema['properties'];
  if (!properties || typeof properties !== 'object') return '';
  const parts: string[] = [];
  for (const [name, prop] of Object.entries(properties as Record<string, unknown>)) {
    parts.push(name);
    if (prop && typeof prop === 'object') {
      const description = (prop as Record<string, unknown>)['description'];
      if (typeof description === 'string') parts.push(description);
    }
  }
  return parts.join(' ');
}
