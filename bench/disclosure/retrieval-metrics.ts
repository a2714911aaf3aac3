/** One query to judge: it hits when any of a label's acceptable tools is retrieved. */
export interface JudgedQuery {
  query: string;
  /** One entry per label; each entry lists the tool names that satisfy that label. */
  labels: string[][];
}

export interface RetrievalFigures {
  queries: number;
  labels: number;
  recallAt1: number;
  recallAt5: number;
  recallAt10: number;
  mrr: number;
}

/**
 * Recall@k over labels (a task labelled with 5 tools counts 5 labels) and MRR of each label's
 * first hit, given each query's ranked tool names.
 */
export function retrievalFigures(queries: readonly JudgedQuery[], rank: (query: string) => string[]): RetrievalFigures {
  let labels = 0;
  const hits = { 1: 0, 5: 0, 10: 0 };
  let reciprocal = 0;
  for (const q of queries) {
    const ranked = rank(q.query);
    const position = new Map<string, number>();
    ranked.forEach((name, i) => {
      if (!position.has(name)) position.set(name, i + 1);
    });
    for (const acceptable of q.labels) {
      labels++;
      const best = Math.min(...acceptable.map((name) => position.get(name) ?? Number.POSITIVE_INFINITY));
      if (best <= 1) hits[1]++;
      if (best <= 5) hits[5]++;
      if (best <= 10) hits[10]++;
      if (Number.isFinite(best)) reciprocal += 1 / best;
    }
  }
  const ratio = (n: number) => (labels ? round(n / labels) : 0);
  return {
    queries: queries.length,
    labels,
    recallAt1: ratio(hits[1]),
    recallAt5: ratio(hits[5]),
    recallAt10: ratio(hits[10]),
    mrr: ratio(reciprocal),
  };
}

export function round(n: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
