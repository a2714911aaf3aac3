// Disclosure evaluation (issue 4): token cost of the progressive mode against a plain tools/list,
// search quality on labelled tasks and single-intent queries, a scripted agent's token spend,
// budget compliance, meta-tool latency, and determinism (two runs, byte-identical answers).
// Run with `npm run bench:disclosure`; the last line printed is one JSON object of the figures.
import { stableStringify } from '@tollgate/kernel';
import {
  SYNTHETIC_QUERIES,
  SYNTHETIC_SEED,
  SYNTHETIC_SERVERS,
  SizeFigures,
  SizeTimings,
  catalogsUnderTest,
  evaluateSize,
  singleIntentQueries,
} from './disclosure/disclosure-evaluation';
import { RetrievalFigures } from './disclosure/retrieval-metrics';

const TARGETS = {
  initialTokensMax: 1_500,
  reductionAt527Pct: 95,
  reductionAt2000Pct: 98,
  singleIntentRecallAt5: 0.9,
  metaToolP95Ms: 10,
};

function runOnce(): { figures: SizeFigures[]; timings: SizeTimings[] } {
  const figures: SizeFigures[] = [];
  const timings: SizeTimings[] = [];
  for (const under of catalogsUnderTest()) {
    const result = evaluateSize(under);
    figures.push(result.figures);
    timings.push(result.timings);
  }
  return { figures, timings };
}

const fmt = (r: RetrievalFigures | null) =>
  r
    ? `${r.recallAt1.toFixed(2)} / ${r.recallAt5.toFixed(2)} / ${r.recallAt10.toFixed(2)} / ${r.mrr.toFixed(2)} (n=${r.labels})`
    : 'n/a';

function printTable(figures: SizeFigures[], timings: SizeTimings[]): void {
  const rows: [string, (f: SizeFigures, t: SizeTimings) => string][] = [
    ['tools / servers', (f) => `${f.tools} / ${f.servers}`],
    ['plain tools/list tokens', (f) => String(f.plainListTokens)],
    ['initial context tokens (hot tools)', (f) => `${f.initialTokens} (${f.hotTools})`],
    ['initial vs plain: fewer tokens', (f) => `${f.initialReductionPct}%`],
    ['tasks R@1/R@5/R@10/MRR', (f) => fmt(f.tasks)],
    ['  tasks, plain BM25 baseline', (f) => fmt(f.tasksBaselineBm25)],
    ['  task labels matching no tool', (f) => (f.tasks ? String(f.tasks.unmatchedLabels) : 'n/a')],
    ['single-intent R@1/R@5/R@10/MRR', (f) => fmt(f.singleIntent)],
    ['  original queries only', (f) => fmt(f.singleIntentOriginal)],
    ['  added-2 queries only', (f) => fmt(f.singleIntentAdded)],
    ['  tuning half', (f) => fmt(f.singleIntentTuning)],
    ['  held-out half', (f) => fmt(f.singleIntentHeldOut)],
    ['  held-out half, original queries', (f) => fmt(f.singleIntentHeldOutOriginal)],
    ['  single-intent, no synonyms', (f) => fmt(f.singleIntentNoSynonyms)],
    ['  single-intent, plain BM25', (f) => fmt(f.singleIntentBaselineBm25)],
    ['synthetic labelled R@1/R@5/R@10/MRR', (f) => fmt(f.synthetic)],
    [
      'agent: tokens to a schema mean/p95/max',
      (f) => `${f.agent.meanTokens} / ${f.agent.p95Tokens} / ${f.agent.maxTokens}`,
    ],
    ['agent: reached the tool', (f) => `${f.agent.succeeded}/${f.agent.runs}`],
    [
      'answers within budget / exact self-count',
      (f) => `${f.budget.withinBudget} / ${f.budget.selfCountExact} (${f.budget.answers} answers)`,
    ],
    ['p95 ms search / schemas / categories', (_f, t) => `${t.searchP95Ms} / ${t.schemasP95Ms} / ${t.categoriesP95Ms}`],
    ['p95 ms search by a key seeing half the servers', (_f, t) => String(t.scopedSearchP95Ms)],
    ['catalog build ms', (_f, t) => String(t.buildMs)],
  ];
  const header = ['', ...figures.map((f) => f.catalog)];
  const table = [header, ...rows.map(([name, cell]) => [name, ...figures.map((f, i) => cell(f, timings[i]))])];
  const widths = header.map((_, c) => Math.max(...table.map((row) => row[c].length)));
  for (const row of table) console.log(row.map((cell, c) => cell.padEnd(widths[c])).join('  '));
}

function main(): void {
  const first = runOnce();
  const second = runOnce();
  const deterministic = stableStringify(first.figures) === stableStringify(second.figures);
  const { figures, timings } = first;
  printTable(figures, timings);

  const at527 = figures.find((f) => f.catalog.startsWith('livemcpbench'));
  const union = figures[figures.length - 1];
  const unionTimings = timings[timings.length - 1];
  const misses: string[] = [];
  if (figures.some((f) => f.initialTokens > TARGETS.initialTokensMax)) misses.push('initialTokens');
  if (!at527 || at527.initialReductionPct < TARGETS.reductionAt527Pct) misses.push('reductionAt527');
  if (union.tools < 2_000 || union.initialReductionPct < TARGETS.reductionAt2000Pct) misses.push('reductionAt2000');
  if (figures.some((f) => f.singleIntent.recallAt5 < TARGETS.singleIntentRecallAt5))
    misses.push('singleIntentRecallAt5');
  if (unionTimings.allP95Ms > TARGETS.metaToolP95Ms) misses.push('metaToolP95');
  if (figures.some((f) => !f.budget.withinBudget || !f.budget.selfCountExact)) misses.push('budget');
  if (!deterministic) misses.push('deterministic');
  console.log(
    `\nsingle-intent queries: ${singleIntentQueries().length}; synthetic: seed ${SYNTHETIC_SEED}, ${SYNTHETIC_SERVERS} servers, ${SYNTHETIC_QUERIES} labelled queries`,
  );
  console.log(misses.length ? `targets missed: ${misses.join(', ')}` : 'all targets met');

  const summary = {
    bench: 'disclosure',
    deterministic,
    targetsMet: misses.length === 0,
    misses,
    sizes: figures.map((f, i) => ({
      catalog: f.catalog,
      tools: f.tools,
      plainListTokens: f.plainListTokens,
      initialTokens: f.initialTokens,
      initialReductionPct: f.initialReductionPct,
      tasks: f.tasks && {
        r1: f.tasks.recallAt1,
        r5: f.tasks.recallAt5,
        r10: f.tasks.recallAt10,
        mrr: f.tasks.mrr,
        labels: f.tasks.labels,
        unmatchedLabels: f.tasks.unmatchedLabels,
      },
      tasksBaselineR5: f.tasksBaselineBm25?.recallAt5 ?? null,
      singleIntent: {
        r1: f.singleIntent.recallAt1,
        r5: f.singleIntent.recallAt5,
        r10: f.singleIntent.recallAt10,
        mrr: f.singleIntent.mrr,
        queries: f.singleIntent.queries,
      },
      singleIntentR5BySubset: {
        original: f.singleIntentOriginal.recallAt5,
        added: f.singleIntentAdded?.recallAt5 ?? null,
        tuning: f.singleIntentTuning.recallAt5,
        heldOut: f.singleIntentHeldOut.recallAt5,
        heldOutOriginal: f.singleIntentHeldOutOriginal.recallAt5,
      },
      singleIntentBaselineR5: f.singleIntentBaselineBm25.recallAt5,
      synthetic: f.synthetic && {
        r1: f.synthetic.recallAt1,
        r5: f.synthetic.recallAt5,
        r10: f.synthetic.recallAt10,
        mrr: f.synthetic.mrr,
      },
      agentTokens: {
        mean: f.agent.meanTokens,
        p95: f.agent.p95Tokens,
        succeeded: f.agent.succeeded,
        runs: f.agent.runs,
      },
      allAnswersWithinBudget: f.budget.withinBudget && f.budget.selfCountExact,
      answers: f.budget.answers,
      p95Ms: {
        search: timings[i].searchP95Ms,
        scopedSearch: timings[i].scopedSearchP95Ms,
        schemas: timings[i].schemasP95Ms,
        categories: timings[i].categoriesP95Ms,
        all: timings[i].allP95Ms,
      },
    })),
  };
  console.log(JSON.stringify(summary));
}

main();
