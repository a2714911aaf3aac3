import { startBenchPlatform } from './support/bench-platform';
import { seedOrg } from './reports.bench';

async function main(): Promise<void> {
  const rows = Number(process.env.BENCH_LEDGER_ROWS ?? 1_000_000);
  const p = await startBenchPlatform({ edges: 0 });
  try {
    const big = await seedOrg(p, 'ut', 'Europe/Paris', rows);
    await p.db.query('VACUUM (ANALYZE) "UsageEvent", "UsageCallDayRollup", "UsageKeyDayRollup", "VirtualKey", "User"');
    const to = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.now() - 29 * 86400_000).toISOString().slice(0, 10);
    const sql = (extra: string) => `${extra}
      WITH a AS (
        SELECT e."userId", e."upstreamId", e."toolName", COALESCE(SUM(e."calls"),0)::bigint AS "calls", COALESCE(SUM(e."errors"),0)::bigint AS "errors", COALESCE(SUM(e."outputTokens"),0)::bigint AS "outputTokens", COALESCE(SUM(e."costMicros"),0)::bigint AS "costMicros"
        FROM "UsageCallDayRollup" e WHERE e."orgId" = '${big.id}'::uuid AND e."day" BETWEEN '${from}'::date AND '${to}'::date
        GROUP BY e."userId", e."upstreamId", e."toolName" LIMIT 50001
      ) SELECT count(*) FROM a`;
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      await p.db.query(sql(''));
      console.log('agg only ms', (performance.now() - t).toFixed(1));
    }
    const plan = await p.db.query(sql('EXPLAIN (ANALYZE, BUFFERS)'));
    console.log(plan.rows.map((r: any) => r['QUERY PLAN']).join('\n'));
    for (const q of [`/reports/spend?from=${from}&to=${to}&groupBy=user,tool`, `/reports/spend?from=${from}&to=${to}&groupBy=user,tool&limit=50`]) {
      const times: number[] = [];
      for (let i = 0; i < 6; i++) {
        const t = performance.now();
        const res = await fetch(`${p.adminUrl}${big.path}${q}`, { headers: { Authorization: `Bearer ${p.env.ADMIN_BOOTSTRAP_TOKEN}` } });
        const text = await res.text();
        times.push(performance.now() - t);
        if (i === 0) console.log(q, res.status, text.length);
      }
      console.log(q, times.map((x) => x.toFixed(0)).join(' '));
    }
    if (process.env.KEEP) await new Promise((r) => setTimeout(r, 1e9));
  } finally {
    await p.close();
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
