/**
 * `npm run bench:console`: how long each main console page takes to become usable (its data
 * rendered, no aria-busy loading state left) after navigation in headless Chromium, on the 1,000,000-row
 * org that bench:reports seeds (same seeding) with 9,000 idle keys added (10,000 keys in all), the
 * explorer also with filters (a team and an upstream, sent to the report API as teamId and upstreamId)
 * and broken down by key and day (tens of thousands of rows: sorted, subtotalled and paged in the page). Each page is opened by URL (a full navigation
 * from about:blank: HTML, scripts, session check and the page's API calls), once to warm up and then BENCH_REPS
 * times; a page that navigates by itself once usable stops the bench (a page defect); the last line is one JSON object with the median and worst ms per page and their ratio
 * to the 1.5 s target (the per-call log's pages: 1 s). The org also gets 100,000 refused calls
 * (RefusedCall, with the rollup its trigger keeps) spread over the same 90 days. Needs Debian's chromium (/usr/bin/chromium) and `npm run build`'s console.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { chromium } from 'playwright-core';
import { seedOrg } from './reports.bench';
import { BenchPlatform, startBenchPlatform } from './support/bench-platform';

const TARGET_MS = 1500;
const CHROMIUM = process.env.BENCH_CHROMIUM ?? '/usr/bin/chromium';

/** Page -> its URL and what shows once its data is there (and every loading state is gone). */
const PAGES: Record<string, { path: string; ready: string[] }> = {
  overview: {
    path: '/console/',
    ready: ['[data-testid="overview-total-spend"]', '.recharts-bar-rectangle', '[data-testid="top-keys"]'],
  },
  explorer: {
    path: '/console/explorer',
    ready: ['[data-testid="explorer-total-cost"]', '.recharts-bar-rectangle', '[data-testid="explorer-table"]'],
  },
  'explorer-key-day': {
    path: '/console/explorer?groupBy=key,day',
    ready: ['[data-testid="explorer-total-cost"]', '[data-testid="explorer-table-total"]'],
  },
  keys: { path: '/console/keys', ready: ['[data-testid="keys-table"]'] },
  budgets: { path: '/console/budgets', ready: ['[data-testid="budgets-table"]'] },
  prices: { path: '/console/prices', ready: ['[data-testid="prices-table"]'] },
  audit: { path: '/console/audit', ready: ['[data-testid="audit-table"], [data-testid="empty-state"]'] },
  people: { path: '/console/people', ready: ['main table'] },
  // The per-call log's first page: ledger calls and refusals merged, newest first (keyset).
  calls: { path: '/console/calls', ready: ['[data-testid="calls-table"]'] },
};
/** The per-call log's first page must be usable sooner than the other pages. */
const CALL_LOG_TARGET_MS = 1000;
const REFUSALS = Number(process.env.BENCH_REFUSALS ?? 100_000);

/** Refused calls of the org's keys over the last 90 days, one row each (the rollup is kept by the insert trigger). */
async function seedRefusals(p: BenchPlatform, orgId: string, n: number): Promise<void> {
  await p.db.query(
    `WITH k AS (SELECT row_number() OVER (ORDER BY id) - 1 AS i, * FROM "VirtualKey" WHERE "orgId" = $1::uuid),
          c AS (SELECT count(*) AS n FROM k)
     INSERT INTO "RefusedCall" (id, "orgId", "teamId", "userId", "keyId", "upstreamId", "toolName", code, calls, "latencyMs", "occurredAt")
     SELECT gen_random_uuid()::text, k."orgId", k."teamId", k."userId", k.id, NULL, 'tool-' || (g % 300),
            (ARRAY['BUDGET_EXCEEDED', 'RATE_LIMITED', 'TOOL_NOT_ALLOWED'])[1 + g % 3], 1, 1,
            now() AT TIME ZONE 'UTC' - (90 * 86400 * random()) * interval '1 second'
     FROM generate_series(1, $2::int) g, c JOIN k ON true WHERE k.i = g % c.n`,
    [orgId, n],
  );
}

/**
 * The call log over the 90 days filtered as people filter it: by one rare key, by the team and the
 * user with the fewest calls, by the tool with the fewest calls (each read through its own ledger index), and to
 * refusals only.
 */
async function filteredCallLog(p: BenchPlatform, orgId: string): Promise<Record<string, (typeof PAGES)[string]>> {
  const one = async (sql: string) => (await p.db.query(sql, [orgId])).rows[0].v as string;
  const keyId = await one(
    `SELECT k.id AS v FROM "VirtualKey" k WHERE k."orgId" = $1 ORDER BY k.name COLLATE "C" DESC LIMIT 1`,
  );
  const fewest = (column: string) =>
    one(`SELECT "${column}" AS v FROM "UsageEvent" WHERE "orgId" = $1 GROUP BY 1 ORDER BY count(*), 1 LIMIT 1`);
  const teamId = await fewest('teamId');
  const userId = await fewest('userId');
  const tool = await fewest('toolName');
  const to = new Date().toISOString().slice(0, 10);
  const from = new Date(Date.now() - 91 * 86_400_000).toISOString().slice(0, 10);
  const base = `/console/calls?from=${from}&to=${to}`;
  return {
    'calls-one-key': { path: `${base}&keyId=${keyId}`, ready: PAGES.calls.ready },
    'calls-one-team': { path: `${base}&teamId=${teamId}`, ready: PAGES.calls.ready },
    'calls-one-user': { path: `${base}&userId=${userId}`, ready: PAGES.calls.ready },
    'calls-one-tool': { path: `${base}&tool=${encodeURIComponent(tool)}`, ready: PAGES.calls.ready },
    'calls-refused': { path: `${base}&outcome=REFUSED`, ready: PAGES.calls.ready },
  };
}

/** Idle keys on top of the seeded 1,000 (no spend): the keys page and every key list read 10,000. */
const EXTRA_KEYS = Number(process.env.BENCH_EXTRA_KEYS ?? 9_000);

async function addIdleKeys(p: BenchPlatform, orgId: string): Promise<number> {
  await p.db.query(
    `INSERT INTO "VirtualKey" (id, "orgId", "teamId", "userId", name, prefix, "secretHash", tags, "updatedAt")
     SELECT gen_random_uuid(), $1::uuid, m."teamId", m."userId", 'idle-' || k, 'tg_i' || lpad(k::text, 5, '0'),
            md5($1 || 'idle' || k), ARRAY['env:idle']::text[], now()
     FROM generate_series(1, ${EXTRA_KEYS}) k
     CROSS JOIN LATERAL (SELECT "teamId", "userId" FROM "VirtualKey" WHERE "orgId" = $1::uuid ORDER BY name LIMIT 1) m`,
    [orgId],
  );
  return Number((await p.db.query('SELECT count(*) AS n FROM "VirtualKey" WHERE "orgId" = $1', [orgId])).rows[0].n);
}

/** A price rule per upstream (the seed has none), so the prices page lists what an org would have. */
async function addPriceRules(p: BenchPlatform, orgId: string): Promise<void> {
  await p.db.query(
    `INSERT INTO "PriceRule" (id, "orgId", "upstreamId", "toolPattern", "perCallMicros", "perOutputTokenMicros")
     SELECT gen_random_uuid(), $1::uuid, id, '*', 2500, 3 FROM "UpstreamServer" WHERE "orgId" = $1::uuid`,
    [orgId],
  );
}

/** The explorer filtered by one team and one upstream of the seeded org (its URL holds the view). */
async function filteredExplorer(p: BenchPlatform, orgId: string): Promise<(typeof PAGES)[string]> {
  const first = async (table: string, order: string) =>
    (await p.db.query(`SELECT id FROM "${table}" WHERE "orgId" = $1 ORDER BY ${order} LIMIT 1`, [orgId])).rows[0]
      .id as string;
  const teamId = await first('Team', 'name');
  const upstreamId = await first('UpstreamServer', 'namespace');
  return { path: `/console/explorer?teamId=${teamId}&upstreamId=${upstreamId}`, ready: PAGES.explorer.ready };
}

function median(ms: number[]): number {
  const s = [...ms].sort((a, b) => a - b);
  return Math.round(s[Math.floor(s.length / 2)]);
}

async function main(): Promise<void> {
  const rows = Number(process.env.BENCH_LEDGER_ROWS ?? 1_000_000);
  const reps = Number(process.env.BENCH_REPS ?? 5);
  const timeZone = process.env.BENCH_TIME_ZONE ?? 'Europe/Paris';
  const loadBefore = loadavg().map((l) => Math.round(l * 100) / 100);
  let p: BenchPlatform | undefined;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-sync'],
  });
  try {
    p = await startBenchPlatform({ edges: 0 });
    const t0 = performance.now();
    const org = await seedOrg(p, 'console-1m', timeZone, rows);
    await seedRefusals(p, org.id, REFUSALS);
    await p.db.query('VACUUM (ANALYZE) "UsageEvent"');
    await p.db.query('ANALYZE "RefusedCall"');
    const seedSeconds = Math.round((performance.now() - t0) / 100) / 10;
    const seeded = Number(
      (await p.db.query('SELECT count(*) AS n FROM "UsageEvent" WHERE "orgId" = $1', [org.id])).rows[0].n,
    );
    const keys = await addIdleKeys(p, org.id);
    await addPriceRules(p, org.id);
    console.log(`seeded ${seeded} ledger rows in ${seedSeconds} s; ${keys} keys`);
    const token = (await p.api('POST', '/v1/admin-tokens', { role: 'ORG_ADMIN', orgId: org.id, name: 'bench' }))
      .secret as string;

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${p.adminUrl}/console/`);
    await page.getByLabel('Admin token').fill(token);
    await page.getByRole('button', { name: 'Sign in with token' }).click();
    await page.getByTestId('role-badge').waitFor();

    const out: Record<string, { medianMs: number; worstMs: number; ratioToTarget: number; runs: number[] }> = {};
    const pages = {
      ...PAGES,
      'explorer-filtered': await filteredExplorer(p, org.id),
      ...(await filteredCallLog(p, org.id)),
    };
    // BENCH_PAGES=calls,keys: only those pages (a quicker run while working on one).
    const only = process.env.BENCH_PAGES?.split(',').map((n) => n.trim());
    // Every main-frame navigation, same-document ones (history.pushState/replaceState) included: a
    // page that navigates by itself once usable is a page defect, named as such below.
    const navigations: { at: number; url: string }[] = [];
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations.push({ at: performance.now(), url: frame.url() });
    });
    /** A navigation, or an error naming the page and the main frame's last navigations (which one raced it). */
    const gotoExplained = async (name: string, url: string) => {
      const asked = performance.now();
      try {
        await page.goto(url);
      } catch (err) {
        const seen = navigations.slice(-5).map((n) => `${Math.round(n.at - asked)} ms: ${n.url}`);
        throw new Error(`${name}: ${(err as Error).message.split('\n')[0]} (last navigations: ${seen.join('; ')})`);
      }
    };
    // A page that navigates by itself once usable (a redirect, its URL rewritten late) is a page defect:
    // checked before the next page is opened, over the whole time the page stayed shown.
    let shown: { name: string; url: string; at: number } | null = null;
    const noSelfNavigation = () => {
      const late = shown ? navigations.filter((n) => n.at >= shown!.at && n.url !== shown!.url) : [];
      if (late.length > 0)
        throw new Error(
          `${shown!.name}: the page navigated by itself once usable: ${late.map((n) => n.url).join(', ')}`,
        );
    };
    for (const [name, { path, ready }] of Object.entries(pages).filter(([n]) => !only || only.includes(n))) {
      const runs: number[] = [];
      for (let i = 0; i <= reps; i++) {
        noSelfNavigation();
        // From a blank page: the page measured before is gone (its timers, its requests in flight and
        // its unload), so each run starts alike and nothing of the last page races this navigation.
        await gotoExplained(name, 'about:blank');
        const start = performance.now();
        await gotoExplained(name, `${p.adminUrl}${path}`);
        // Usable: every ready selector present and no loading state (aria-busy; role=status alone also
        // matches Recharts' always-mounted tooltip). One CSS selector that Playwright's injected script
        // waits for in the page (no eval, which the page's CSP refuses, and no DevTools round trip per check).
        const usable = `html${ready.map((sel) => `:has(${sel})`).join('')}:not(:has([aria-busy="true"]))`;
        await page
          .locator(usable)
          .waitFor({ state: 'attached', timeout: 60_000 })
          .catch(() => {
            throw new Error(`${name}: not usable after 60 s`);
          });
        const ms = performance.now() - start;
        if ((await page.locator('[role="alert"]').count()) > 0)
          throw new Error(`${name}: ${await page.locator('[role="alert"]').first().textContent()}`);
        if (i > 0) runs.push(Math.round(ms));
        shown = { name, url: page.url(), at: performance.now() };
      }
      const target = name.startsWith('calls') ? CALL_LOG_TARGET_MS : TARGET_MS;
      out[name] = {
        medianMs: median(runs),
        worstMs: Math.max(...runs),
        ratioToTarget: Math.round((median(runs) / target) * 100) / 100,
        runs,
      };
      console.log(
        `${name.padEnd(18)} usable after ${out[name].medianMs} ms (median of ${reps}; worst ${out[name].worstMs} ms; ${out[name].ratioToTarget} of the ${target} ms target)`,
      );
    }
    noSelfNavigation();
    const figures = {
      bench: 'console',
      ledgerRows: seeded,
      keys,
      orgTimeZone: timeZone,
      reps,
      targetMs: TARGET_MS,
      pages: out,
      callLogTargetMs: CALL_LOG_TARGET_MS,
      refusedCalls: REFUSALS,
      // The issue's targets are medians; allUnderTarget holds every run (the worst) to them too.
      allMediansUnderTarget: Object.entries(out).every(
        ([name, r]) => r.medianMs < (name.startsWith('calls') ? CALL_LOG_TARGET_MS : TARGET_MS),
      ),
      allUnderTarget: Object.entries(out).every(
        ([name, r]) => r.worstMs < (name.startsWith('calls') ? CALL_LOG_TARGET_MS : TARGET_MS),
      ),
      seedSeconds,
      loadAverage: { before: loadBefore, after: loadavg().map((l) => Math.round(l * 100) / 100) },
    };
    console.log(JSON.stringify(figures));
    // BENCH_HOLD=1: keep the seeded platform up until SIGINT/SIGTERM, to look into one page's
    // queries (EXPLAIN ANALYZE on its database) or time it by hand; BENCH_PAGES=none seeds only.
    if (process.env.BENCH_HOLD === '1') {
      console.log(
        JSON.stringify({ hold: true, adminUrl: p.adminUrl, databaseUrl: p.env.DATABASE_URL, orgId: org.id, token }),
      );
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
    }
  } finally {
    await browser.close();
    await p?.close();
  }
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exit(1);
});
