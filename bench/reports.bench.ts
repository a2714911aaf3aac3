/**
 * `npm run bench:reports`: the admin API's report routes on 1,000,000 ledger rows, as the console's
 * Overview and Spend explorer call them. One org (teams, ~200 users, ~1,000 tagged keys, ~10
 * upstreams, ~300 tools, 90 days, skewed towards hot keys, hot tools and recent days) is seeded
 * with one INSERT ... SELECT FROM generate_series; a second org with 10,000 rows of the same shape
 * is the baseline measured in the same run. Each route is timed end to end over HTTP (answer read
 * in full), sequentially after a warm-up; the last line is one JSON object with p50/p95 per route.
 * Routes include the explorer's filters and cross breakdowns, and calls made with a TEAM_ADMIN and a
 * MEMBER token (issued through the API); every spend route's totals are checked against the
 * ledger's sums for the same days and filters (a role's forced team or user included).
 *
 * BENCH_NOW (an ISO instant, e.g. 2026-11-11T12:00:00Z; the clock when unset) pins "now": the seed's
 * last calls and the ranges' last day. What a range reads from day rows depends on the day of the
 * month (its edge months' days), so a run can show the 11th or the 15th on any date. Routes without a
 * range (budgets, keys) still read the clock's own period.
 */
import { Prisma } from '@tollgate/db';
import { coverRows, MONTHLY_ROLLUPS, MonthlyRollup, rangeCover, zonedDayRange } from '@tollgate/reporting';
import { DateTime } from 'luxon';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { BenchPlatform, startBenchPlatform } from './support/bench-platform';
import { rebuildRollups, withoutIndexes } from './support/ledger-rollups';

const TARGET_MS = 500;
const TEAMS = 8;
const USERS = 200;
const KEYS = 1000;
const UPSTREAMS = 10;
const TOOLS = 300;
const DAYS = 90;
const SEED_CHUNK = 1_000_000;

const PINNED_NOW = process.env.BENCH_NOW ? DateTime.fromISO(process.env.BENCH_NOW, { zone: 'utc' }) : null;
if (PINNED_NOW && !PINNED_NOW.isValid) throw new Error(`BENCH_NOW is not an ISO date-time: ${process.env.BENCH_NOW}`);
/** The bench's "now": BENCH_NOW, else the clock. */
const benchNow = (): DateTime => PINNED_NOW ?? DateTime.now();
/** "Now" as the ledger's UTC timestamp (without zone), a query parameter. */
const benchNowUtc = (): string => benchNow().toUTC().toFormat("yyyy-MM-dd'T'HH:mm:ss");

interface Org {
  id: string;
  path: string;
}

/** One org's people, keys and upstreams by SQL (ids derived from the org id), then `rows` ledger rows. */
export async function seedOrg(p: BenchPlatform, name: string, timeZone: string, rows: number): Promise<Org> {
  const org = await p.api('POST', '/v1/orgs', { name, slug: `${name}-${Date.now().toString(36)}`, timeZone });
  const o = org.id as string;
  const q = (sql: string, params: unknown[] = []) => p.db.query(sql, params);
  // Ids derived from the org id, shaped as version-4 UUIDs (the API validates them).
  const id = (kind: string, n: string) =>
    `overlay(overlay(md5($1 || '${kind}' || ${n}) placing '4' from 13) placing '8' from 17)::uuid`;
  await q(
    `INSERT INTO "Team" (id, "orgId", name, "updatedAt") SELECT ${id('team', 't')}, $1::uuid, 'team-' || t, now() FROM generate_series(0, ${TEAMS - 1}) t`,
    [o],
  );
  await q(
    `INSERT INTO "User" (id, "orgId", email, "updatedAt") SELECT ${id('user', 'u')}, $1::uuid, 'user' || u || '@bench.test', now() FROM generate_series(0, ${USERS - 1}) u`,
    [o],
  );
  await q(
    `INSERT INTO "TeamMember" ("orgId", "teamId", "userId") SELECT $1::uuid, ${id('team', `(u % ${TEAMS})`)}, ${id('user', 'u')} FROM generate_series(0, ${USERS - 1}) u`,
    [o],
  );
  // Four keys in five carry two tags (env and project); the fifth has none.
  await q(
    `INSERT INTO "VirtualKey" (id, "orgId", "teamId", "userId", name, prefix, "secretHash", tags, "updatedAt")
     SELECT ${id('key', 'k')}, $1::uuid, ${id('team', `((k % ${USERS}) % ${TEAMS})`)}, ${id('user', `(k % ${USERS})`)}, 'key-' || k, 'tg_b' || lpad(k::text, 4, '0'),
            md5($1 || 'secret' || k),
            CASE WHEN k % 5 = 0 THEN ARRAY[]::text[] ELSE ARRAY['env:' || (CASE WHEN k % 3 = 0 THEN 'dev' ELSE 'prod' END), 'project:p' || (k % 12)] END, now()
     FROM generate_series(0, ${KEYS - 1}) k`,
    [o],
  );
  await q(
    // Sync paused: nothing listens at these URLs, and the worker would try them on its schedule.
    `INSERT INTO "UpstreamServer" (id, "orgId", namespace, transport, url, "syncPaused", "updatedAt")
     SELECT ${id('up', 's')}, $1::uuid, 'up' || s, 'STREAMABLE_HTTP', 'http://127.0.0.1:9/mcp', true, now() FROM generate_series(0, ${UPSTREAMS - 1}) s`,
    [o],
  );
  // Skew: key ~ U^3 (a few hot keys), each key mostly calls a dozen tools of its own (~U^2),
  // age ~ 1 - sqrt(U) (usage grew over the 90 days: the last 30 days hold ~56% of the rows).
  // 97% OK; errors of three tools in four are free. Deterministic per run (setseed). One statement
  // per million rows with the ledger's triggers off (the session replicates, as a restore would),
  // then the rollups and running totals rebuilt from the ledger in one pass, as bench:ledger seeds
  // (each statement's size bounded).
  await q('SELECT setseed(0.17)');
  // A large seed fills the ledger without its indexes and builds them after (one sort each); a
  // small one (the baseline org) keeps them rather than rebuilding them over the large org's rows.
  const fill = async () => {
    await q('SET session_replication_role = replica');
    for (let done = 0; done < rows; done += SEED_CHUNK)
      await q(
        `INSERT INTO "UsageEvent" (id, "orgId", "teamId", "userId", "keyId", "upstreamId", "toolName", outcome, "costMicros", "inputTokens", "outputTokens", "latencyMs", "occurredAt")
       SELECT $1 || '-' || g, $1::uuid, ${id('team', `((k % ${USERS}) % ${TEAMS})`)}, ${id('user', `(k % ${USERS})`)}, ${id('key', 'k')},
              ${id('up', `(t % ${UPSTREAMS})`)}, 'tool_' || t,
              (CASE WHEN r < 0.97 THEN 'OK' WHEN r < 0.99 THEN 'TOOL_ERROR' ELSE 'UPSTREAM_ERROR' END)::"UsageOutcome",
              CASE WHEN r < 0.97 OR t % 4 = 0 THEN (t % 7 + 1) * 1000 + tok * 2 ELSE 0 END, 50, tok, 20 + (r * 900)::int,
              date_trunc('second', $2::timestamp - (${DAYS} * 86400 * (1 - sqrt(random()))) * interval '1 second')
       FROM (SELECT g, k, (k * 37 + floor(12 * power(random(), 2))::int + CASE WHEN random() < 0.1 THEN floor(${TOOLS} * random())::int ELSE 0 END) % ${TOOLS} AS t,
                    random() AS r, floor(2000 * power(random(), 2))::int AS tok
             FROM (SELECT g, floor(${KEYS} * power(random(), 3))::int AS k FROM generate_series(${done + 1}, ${Math.min(rows, done + SEED_CHUNK)}) g) s) x`,
        [o, benchNowUtc()],
      );
    await q('RESET session_replication_role');
  };
  if (rows >= 100_000) await withoutIndexes(p.db, 'UsageEvent', fill);
  else await fill();
  await rebuildRollups(p.db, o);
  // Budgets as an org sets them up: the org and each team per month, a few keys per day.
  await p.api('PUT', `/v1/orgs/${o}/budgets`, {
    scope: 'ORG',
    scopeId: o,
    period: 'MONTH',
    limitMicros: 50_000_000_000,
  });
  const teams = await p.api('GET', `/v1/orgs/${o}/teams`);
  for (const t of teams)
    await p.api('PUT', `/v1/orgs/${o}/budgets`, {
      scope: 'TEAM',
      scopeId: t.id,
      period: 'MONTH',
      limitMicros: 8_000_000_000,
    });
  const keys = (await q(`SELECT id FROM "VirtualKey" WHERE "orgId" = $1 ORDER BY name LIMIT 5`, [o])).rows;
  for (const k of keys)
    await p.api('PUT', `/v1/orgs/${o}/budgets`, {
      scope: 'KEY',
      scopeId: k.id,
      period: 'DAY',
      limitMicros: 100_000_000,
    });
  return { id: o, path: `/v1/orgs/${o}` };
}

/** A role's admin token and the team or user its reports are forced to. */
interface RoleToken {
  token: string;
  forced: { teamId?: string; userId?: string };
}

/** A report call: the path below the org, and the role token that makes it (the bootstrap platform admin if none). */
interface Route {
  path: string;
  role?: 'teamAdmin' | 'member';
}

/** The ids filter routes use, read from the seeded org (hot ones: the skew puts most calls on low key numbers). */
interface FilterIds {
  teamId: string;
  userId: string;
  upstreamId: string;
  tools: string[];
}

/** The calls the console makes (apps/console/src/pages): name -> route below the org. */
function consoleRoutes(timeZone: string, ids: FilterIds): Record<string, Route> {
  const today = benchNow().setZone(timeZone);
  const day = (d: DateTime) => d.toISODate() as string;
  const mtd = `from=${day(today.startOf('month'))}&to=${day(today)}`;
  const d30 = `from=${day(today.minus({ days: 29 }))}&to=${day(today)}`;
  const d90 = `from=${day(today.minus({ days: DAYS - 1 }))}&to=${day(today)}`;
  const spend = (q: string): Route => ({ path: `/reports/spend?${q}` });
  const routes: Record<string, Route> = {
    // Overview: month to date (overview-page.tsx): its top fives, and its chart from a page's perDay.
    'overview.total': spend(mtd),
    'overview.budgets': { path: '/reports/budgets' },
    'overview.byTool': spend(`${mtd}&groupBy=tool&top=5`),
    'overview.byKey': spend(`${mtd}&groupBy=key&top=5`),
    'overview.byUser': spend(`${mtd}&groupBy=user&top=5`),
    'overview.perDayByTeam': spend(`${mtd}&groupBy=day,team&limit=1`),
    'overview.perDayByUpstream': spend(`${mtd}&groupBy=day,upstream&limit=1`),
    'overview.keys': { path: '/keys' },
    // Spend explorer (spend-explorer-page.tsx): last 30 days, team and day by default. The routes
    // below are its reports as JSON answers (the API's default bound, the 1,000 costliest rows);
    // the page itself asks for 50 lines of the table (limit), as `.page` routes do.
    'explorer.30d.team,day': spend(`${d30}&groupBy=team,day`),
    'explorer.30d.team,day.page': spend(`${d30}&groupBy=team,day&limit=50&offset=0`),
  };
  for (const dim of ['team', 'user', 'key', 'upstream', 'tool', 'day', 'tag']) {
    routes[`explorer.30d.${dim}`] = spend(`${d30}&groupBy=${dim}`);
    routes[`explorer.90d.${dim}`] = spend(`${d90}&groupBy=${dim}`);
  }
  routes['explorer.90d.team,day'] = spend(`${d90}&groupBy=team,day`);
  routes['explorer.90d.key,tag=project:p3'] = spend(`${d90}&groupBy=key&tag=project:p3`);
  // Breakdowns across people and tools (the per-key-and-tool rollup).
  routes['explorer.30d.team,upstream'] = spend(`${d30}&groupBy=team,upstream`);
  routes['explorer.30d.tool,tag'] = spend(`${d30}&groupBy=tool,tag`);
  routes['explorer.30d.user,tool'] = spend(`${d30}&groupBy=user,tool`);
  routes['explorer.30d.user,tool.page'] = spend(`${d30}&groupBy=user,tool&limit=50&offset=0`);
  routes['explorer.90d.tool,tag'] = spend(`${d90}&groupBy=tool,tag`);
  // Filters (the explorer's filter bar).
  const tools = ids.tools.join(',');
  routes['explorer.90d.day,teamId'] = spend(`${d90}&groupBy=day&teamId=${ids.teamId}`);
  routes['explorer.30d.tool,userId'] = spend(`${d30}&groupBy=tool&userId=${ids.userId}`);
  routes['explorer.90d.key,tool'] = spend(`${d90}&groupBy=key&tool=${tools}`);
  routes['explorer.30d.user,upstreamId,tool'] = spend(`${d30}&groupBy=user&upstreamId=${ids.upstreamId}&tool=${tools}`);
  routes['explorer.90d.tool,tag,teamId'] = spend(`${d90}&groupBy=tool,tag&teamId=${ids.teamId}`);
  // A team admin's and a member's own reports (their scope forced by the API).
  routes['role.teamAdmin.90d.user,day'] = { ...spend(`${d90}&groupBy=user,day`), role: 'teamAdmin' };
  routes['role.teamAdmin.30d.tool'] = { ...spend(`${d30}&groupBy=tool`), role: 'teamAdmin' };
  routes['role.teamAdmin.budgets'] = { path: '/reports/budgets', role: 'teamAdmin' };
  routes['role.member.30d.tool,day'] = { ...spend(`${d30}&groupBy=tool,day`), role: 'member' };
  routes['role.member.90d.key'] = { ...spend(`${d90}&groupBy=key`), role: 'member' };
  routes['explorer.30d.csv.team,day'] = spend(`${d30}&groupBy=team,day&format=csv`);
  routes['explorer.90d.csv.key'] = spend(`${d90}&groupBy=key&format=csv`);
  return routes;
}

/** A TEAM_ADMIN token for the org's first team and a MEMBER token for its first user, issued through the API. */
async function roleTokens(
  p: BenchPlatform,
  org: Org,
  ids: FilterIds,
): Promise<Record<'teamAdmin' | 'member', RoleToken>> {
  const issue = async (body: Record<string, unknown>) =>
    (await p.api('POST', '/v1/admin-tokens', { orgId: org.id, ...body })).secret as string;
  return {
    teamAdmin: {
      token: await issue({ role: 'TEAM_ADMIN', teamId: ids.teamId, name: 'bench team admin' }),
      forced: { teamId: ids.teamId },
    },
    member: {
      token: await issue({ role: 'MEMBER', userId: ids.userId, name: 'bench member' }),
      forced: { userId: ids.userId },
    },
  };
}

/** The hot team, user, upstream and two tools of an org (ids as seedOrg derives them). */
async function filterIds(p: BenchPlatform, org: Org): Promise<FilterIds> {
  const one = async (sql: string) => (await p.db.query(sql, [org.id])).rows[0].id as string;
  return {
    teamId: await one(`SELECT id FROM "Team" WHERE "orgId" = $1 AND name = 'team-0'`),
    userId: await one(`SELECT id FROM "User" WHERE "orgId" = $1 AND email = 'user0@bench.test'`),
    upstreamId: await one(`SELECT id FROM "UpstreamServer" WHERE "orgId" = $1 AND namespace = 'up0'`),
    // Key 0's favourite tools (tool_0 .. tool_11) and one of upstream 0's others.
    tools: ['tool_0', 'tool_10', 'tool_40'],
  };
}

/** Sequential timings of one GET (the whole answer read), in ms. */
async function timeRoute(
  p: BenchPlatform,
  url: string,
  warmup: number,
  reps: number,
  token = p.env.ADMIN_BOOTSTRAP_TOKEN,
): Promise<{ ms: number[]; bytes: number; truncated: boolean }> {
  const headers = { Authorization: `Bearer ${token}` };
  const ms: number[] = [];
  let bytes = 0;
  let truncated = false;
  for (let i = 0; i < warmup + reps; i++) {
    const t0 = performance.now();
    const res = await fetch(`${p.adminUrl}${url}`, { headers });
    const body = await res.text();
    const t = performance.now() - t0;
    if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${body.slice(0, 300)}`);
    bytes = body.length;
    truncated = body.includes('"truncated":true');
    if (i >= warmup) ms.push(t);
  }
  return { ms, bytes, truncated };
}

function pct(ms: number[], q: number): number {
  const s = [...ms].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] * 10) / 10;
}

/** GET a report as a role (the bootstrap platform admin if none), the JSON answer. */
async function getAs(p: BenchPlatform, url: string, token?: string): Promise<any> {
  if (!token) return p.api('GET', url);
  const res = await fetch(`${p.adminUrl}${url}`, { headers: { Authorization: `Bearer ${token}` } });
  const body = await res.json();
  if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

/**
 * The report's totals (and the sum of its rows and its remainder, unless grouped by tag or paged) against the ledger's own sums
 * over the same local days and the same filters: those of the URL and, for a role's token, the team
 * or user its scope forces (checked here from what the token was issued for, not from the answer).
 */
async function totalsEqualLedger(
  p: BenchPlatform,
  org: Org,
  timeZone: string,
  routes: Record<string, Route>,
  roles: Record<'teamAdmin' | 'member', RoleToken>,
): Promise<boolean> {
  let equal = true;
  for (const [name, route] of Object.entries(routes)) {
    const url = route.path;
    if (!url.startsWith('/reports/spend') || url.includes('format=csv')) continue;
    const role = route.role ? roles[route.role] : undefined;
    const report = await getAs(p, `${org.path}${url}`, role?.token);
    const start = DateTime.fromISO(report.from, { zone: timeZone }).toUTC().toISO({ includeOffset: false });
    const end = DateTime.fromISO(report.to, { zone: timeZone })
      .plus({ days: 1 })
      .toUTC()
      .toISO({ includeOffset: false });
    const q = new URL(`http://x${url}`).searchParams;
    const tag = q.get('tag');
    const list = (field: string, forced?: string) => {
      const values = q.get(field)?.split(',') ?? [];
      return forced ? [forced] : values.length > 0 ? values : null;
    };
    const ledger = (
      await p.db.query(
        `SELECT count(*)::text AS calls, count(*) FILTER (WHERE outcome <> 'OK')::text AS errors, COALESCE(sum("outputTokens"), 0)::text AS "outputTokens", COALESCE(sum("costMicros"), 0)::text AS "costMicros"
         FROM "UsageEvent" e WHERE "orgId" = $1 AND "occurredAt" >= $2::timestamp AND "occurredAt" < $3::timestamp
           AND ($4::text IS NULL OR EXISTS (SELECT 1 FROM "VirtualKey" k WHERE k.id = e."keyId" AND $4 = ANY(k.tags)))
           AND ($5::uuid[] IS NULL OR "teamId" = ANY($5)) AND ($6::uuid[] IS NULL OR "userId" = ANY($6))
           AND ($7::uuid[] IS NULL OR "keyId" = ANY($7)) AND ($8::uuid[] IS NULL OR "upstreamId" = ANY($8))
           AND ($9::text[] IS NULL OR "toolName" = ANY($9))`,
        [
          org.id,
          start,
          end,
          tag,
          list('teamId', role?.forced.teamId),
          list('userId', role?.forced.userId),
          list('keyId'),
          list('upstreamId'),
          list('tool'),
        ],
      )
    ).rows[0];
    const groupedByTag = (q.get('groupBy') ?? '').split(',').includes('tag');
    // A bounded answer's rows plus its remainder (the rows left out) are the whole report.
    const sumOfRows = (m: string) =>
      groupedByTag || q.has('limit')
        ? null
        : (
            report.rows.reduce((s: bigint, r: Record<string, unknown>) => s + BigInt(String(r[m])), 0n) +
            BigInt(String(report.remainder?.[m] ?? 0))
          ).toString();
    if (Number(ledger.calls) === 0) {
      console.error(`${name}: the ledger has no calls for this route, so it checks nothing`);
      equal = false;
    }
    for (const m of ['calls', 'errors', 'outputTokens', 'costMicros']) {
      const rowsSum = sumOfRows(m);
      if (String(report.totals[m]) !== ledger[m] || (rowsSum !== null && rowsSum !== ledger[m])) {
        console.error(`${name}: ${m} report ${report.totals[m]} (rows ${rowsSum}) != ledger ${ledger[m]}`);
        equal = false;
      }
    }
  }
  return equal;
}

async function main(): Promise<void> {
  const rows = Number(process.env.BENCH_LEDGER_ROWS ?? 1_000_000);
  const baselineRows = Number(process.env.BENCH_BASELINE_ROWS ?? 10_000);
  const reps = Number(process.env.BENCH_REPS ?? 30);
  const warmup = Number(process.env.BENCH_WARMUP ?? 3);
  const timeZone = process.env.BENCH_TIME_ZONE ?? 'Europe/Paris';
  const loadBefore = loadavg().map((l) => Math.round(l * 100) / 100);
  let p: BenchPlatform | undefined;
  try {
    p = await startBenchPlatform({ edges: 0 });
    const t0 = performance.now();
    const big = await seedOrg(p, 'bench-1m', timeZone, rows);
    const small = await seedOrg(p, 'bench-10k', timeZone, baselineRows);
    const seedSeconds = Math.round((performance.now() - t0) / 100) / 10;
    // The statistics autovacuum would gather after such a load, now rather than at some point mid-run:
    // the ledger's and the rollups' the trigger filled (without them the planner takes the 484k-row
    // rollup for a dozen rows and sorts instead of hashing).
    const t1 = performance.now();
    await p.db.query(
      'VACUUM (ANALYZE) "UsageEvent", "UsageKeyDayRollup", "UsageToolDayRollup", "UsageCallDayRollup", "UsageCallDekadRollup", "UsageCallMonthRollup", "UsageUserCallDekadRollup", "UsageUserCallMonthRollup", "UsageToolTagDayRollup", "UsageToolTagMonthRollup", "UsageTeamToolTagDayRollup", "UsageTeamToolTagMonthRollup", "VirtualKey"',
    );
    const vacuumSeconds = Math.round((performance.now() - t1) / 100) / 10;
    const seeded = Number(
      (await p.db.query('SELECT count(*) AS n FROM "UsageEvent" WHERE "orgId" = $1', [big.id])).rows[0].n,
    );
    const rollupRows = (
      await p.db.query(
        `SELECT (SELECT count(*) FROM "UsageKeyDayRollup" WHERE "orgId" = $1)::int AS "keyDays", (SELECT count(*) FROM "UsageToolDayRollup" WHERE "orgId" = $1)::int AS "toolDays",
                (SELECT count(*) FROM "UsageCallDayRollup" WHERE "orgId" = $1)::int AS "callDays",
                (SELECT count(*) FROM "UsageCallDekadRollup" WHERE "orgId" = $1)::int AS "callDekads",
                (SELECT count(*) FROM "UsageCallMonthRollup" WHERE "orgId" = $1)::int AS "callMonths",
                (SELECT count(*) FROM "UsageUserCallDekadRollup" WHERE "orgId" = $1)::int AS "userCallDekads",
                (SELECT count(*) FROM "UsageUserCallMonthRollup" WHERE "orgId" = $1)::int AS "userCallMonths",
                (SELECT count(*) FROM "UsageToolTagDayRollup" WHERE "orgId" = $1)::int AS "toolTagDays",
                (SELECT count(*) FROM "UsageToolTagMonthRollup" WHERE "orgId" = $1)::int AS "toolTagMonths",
                (SELECT count(*) FROM "UsageTeamToolTagDayRollup" WHERE "orgId" = $1)::int AS "teamToolTagDays",
                (SELECT count(*) FROM "UsageTeamToolTagMonthRollup" WHERE "orgId" = $1)::int AS "teamToolTagMonths"`,
        [big.id],
      )
    ).rows[0];
    console.log(
      `seeded ${seeded} ledger rows (+${baselineRows} baseline) in ${seedSeconds} s, vacuum/analyze ${vacuumSeconds} s; rollup rows ${JSON.stringify(rollupRows)}`,
    );

    const ids = await filterIds(p, big);
    const routes = consoleRoutes(timeZone, ids);
    // The small org's routes filter by its own ids, its role tokens act in it.
    const smallIds = await filterIds(p, small);
    const smallRoutes = consoleRoutes(timeZone, smallIds);
    const roles = await roleTokens(p, big, ids);
    const smallRoles = await roleTokens(p, small, smallIds);
    // A breakdown over the report row cap (more rows than MAX_REPORT_ROWS at this size, e.g. users by
    // tool over 30 days at 10M rows) is refused with REPORT_TOO_LARGE: listed, not timed.
    const tooLarge: string[] = [];
    for (const [name, route] of Object.entries(routes)) {
      const token = route.role ? roles[route.role].token : p.env.ADMIN_BOOTSTRAP_TOKEN;
      const res = await fetch(`${p.adminUrl}${big.path}${route.path}`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      if (res.status === 400 && (await res.text()).includes('REPORT_TOO_LARGE')) {
        tooLarge.push(name);
        delete routes[name];
      }
    }
    const equal = await totalsEqualLedger(p, big, timeZone, routes, roles);
    const out: Record<
      string,
      {
        p50: number;
        p95: number;
        p95ToTarget: number;
        baselineP95: number;
        p95ToBaseline: number;
        bytes: number;
        truncated: boolean;
      }
    > = {};
    for (const [name, route] of Object.entries(routes)) {
      const smallRoute = smallRoutes[name];
      const base = await timeRoute(
        p,
        `${small.path}${smallRoute.path}`,
        warmup,
        reps,
        smallRoute.role && smallRoles[smallRoute.role].token,
      );
      const r = await timeRoute(p, `${big.path}${route.path}`, warmup, reps, route.role && roles[route.role].token);
      const p95 = pct(r.ms, 0.95);
      const baselineP95 = pct(base.ms, 0.95);
      out[name] = {
        p50: pct(r.ms, 0.5),
        p95,
        p95ToTarget: Math.round((p95 / TARGET_MS) * 100) / 100,
        baselineP95,
        p95ToBaseline: Math.round((p95 / baselineP95) * 10) / 10,
        bytes: r.bytes,
        truncated: r.truncated,
      };
      console.log(
        `${name.padEnd(36)} p50 ${String(out[name].p50).padStart(7)} ms  p95 ${String(p95).padStart(7)} ms  (${out[name].p95ToTarget} of target; 10k rows p95 ${baselineP95} ms)`,
      );
    }

    // The Overview as the browser loads it: its calls at once (Promise.all), time to the last answer.
    const overviewUrls = Object.entries(routes)
      .filter(([n]) => n.startsWith('overview.'))
      .map(([, r]) => `${big.path}${r.path}`);
    overviewUrls.push(`${big.path}/teams`, `${big.path}/users`);
    const page: number[] = [];
    for (let i = 0; i < warmup + Math.ceil(reps / 2); i++) {
      const t = performance.now();
      await Promise.all(overviewUrls.map((u) => p!.api('GET', u)));
      if (i >= warmup) page.push(performance.now() - t);
    }

    // Floor: Postgres alone summing the 90 days of the big org (no grouping, no HTTP), in the same run.
    const floor: number[] = [];
    for (let i = 0; i < warmup + reps; i++) {
      const t = performance.now();
      await p.db.query(
        `SELECT count(*), sum("costMicros") FROM "UsageEvent" WHERE "orgId" = $1 AND "occurredAt" >= $2::timestamp - interval '${DAYS} days'`,
        [big.id, benchNowUtc()],
      );
      if (i >= warmup) floor.push(performance.now() - t);
    }

    // Two breakdowns in Postgres alone, in the same run: the sums from the day rows (the read before
    // month rows) against the month rows for the months after the range's first and the day rows for
    // the rest of that first month (what the report reads when that month has calls before the
    // range). Tools by tag over 90 days (the tool-by-tag rollup) and users by tool over 30 days (the
    // per-key-and-tool one).
    const last = benchNow().setZone(timeZone);
    const to = last.toISODate() as string;
    const sums = `sum("calls"), sum("errors"), sum("outputTokens"), sum("costMicros")`;
    const timeSql = async (text: string, args: unknown[]) => {
      const ms: number[] = [];
      for (let i = 0; i < warmup + reps; i++) {
        const t = performance.now();
        await p!.db.query('BEGIN');
        await p!.db.query(`SET LOCAL work_mem = '64MB'`);
        await p!.db.query(text, args);
        await p!.db.query('COMMIT');
        if (i >= warmup) ms.push(performance.now() - t);
      }
      return { p50: pct(ms, 0.5), p95: pct(ms, 0.95) };
    };
    const dayAgainstMonthRows = async (days: number, dayTable: string, monthTable: string, columns: string) => {
      const first = last.minus({ days: days - 1 });
      const args = [big.id, first.toISODate(), to, first.startOf('month').plus({ months: 1 }).toISODate()];
      const group = columns
        .split(', ')
        .map((_, i) => i + 1)
        .join(', ');
      const figures = `"calls", "errors", "outputTokens", "costMicros"`;
      const sql = {
        dayRows: `SELECT ${columns}, ${sums} FROM "${dayTable}"
                  WHERE "orgId" = $1 AND "day" BETWEEN $2::date AND $3::date AND $4::date IS NOT NULL GROUP BY ${group}`,
        monthRows: `SELECT ${columns}, ${sums} FROM (
                      SELECT ${columns}, ${figures} FROM "${monthTable}" WHERE "orgId" = $1 AND "month" >= $4::date AND "month" <= $3::date
                      UNION ALL
                      SELECT ${columns}, ${figures} FROM "${dayTable}" WHERE "orgId" = $1 AND "day" >= $2::date AND "day" < $4::date) r
                    GROUP BY ${group}`,
      };
      const timed: Record<string, { p50: number; p95: number }> = {};
      for (const [name, text] of Object.entries(sql)) timed[name] = await timeSql(text, args);
      return { ...timed, p95MonthToDay: Math.round((timed.monthRows.p95 / timed.dayRows.p95) * 100) / 100 };
    };
    const toolTag90dSql = await dayAgainstMonthRows(
      DAYS,
      'UsageToolTagDayRollup',
      'UsageToolTagMonthRollup',
      '"upstreamId", "toolName", "tags"',
    );
    console.log(`tool,tag 90d in Postgres alone: ${JSON.stringify(toolTag90dSql)}`);
    const userTool30dSql = await dayAgainstMonthRows(
      30,
      'UsageCallDayRollup',
      'UsageCallMonthRollup',
      '"userId", "upstreamId", "toolName"',
    );
    console.log(`user,tool 30d in Postgres alone: ${JSON.stringify(userTool30dSql)}`);
    // The same sums from what the report reads over those 30 days (rangeCover: months, dekads and day
    // rows, some subtracted), and how many rows that is: the per-user month and dekad rows (what users by
    // tool reads since 20270104010000) against the per-key ones (what it read before).
    const range30 = zonedDayRange(last.minus({ days: 29 }).toISODate() as string, to, timeZone);
    const coverRead = async (rollup: MonthlyRollup) => {
      const cover = await rangeCover(p!.db, rollup, big.id, range30);
      const coverSql = (select: string) =>
        Prisma.sql`SELECT ${Prisma.raw(select)} FROM ${coverRows(rollup, big.id, range30, cover)} r`;
      const counted = coverSql('count(*)::int AS n');
      const summed = coverSql(`"userId", "upstreamId", "toolName", ${sums}`);
      return {
        cover,
        rows: (await p!.db.query<{ n: number }>(counted.text, counted.values)).rows[0].n,
        ...(await timeSql(`${summed.text} GROUP BY 1, 2, 3`, summed.values)),
      };
    };
    const userTool30dCover = await coverRead(MONTHLY_ROLLUPS.userCallDays!);
    console.log(`user,tool 30d read as the report reads it: ${JSON.stringify(userTool30dCover)}`);
    const userTool30dKeyCover = await coverRead(MONTHLY_ROLLUPS.callDays!);
    console.log(`user,tool 30d from the per-key rows: ${JSON.stringify(userTool30dKeyCover)}`);

    const p95s = Object.values(out).map((r) => r.p95);
    const figures = {
      bench: 'reports',
      ledgerRows: seeded,
      rollupRows,
      baselineLedgerRows: baselineRows,
      orgTimeZone: timeZone,
      now: PINNED_NOW ? PINNED_NOW.toISO() : 'clock',
      reps,
      warmup,
      targetMs: TARGET_MS,
      routes: out,
      overviewPageAllCallsAtOnce: { p50: pct(page, 0.5), p95: pct(page, 0.95), calls: overviewUrls.length },
      pgSum90dFloor: { p50: pct(floor, 0.5), p95: pct(floor, 0.95) },
      toolTag90dSql,
      userTool30dSql,
      userTool30dCover,
      userTool30dKeyCover,
      worstP95: Math.max(...p95s),
      allUnderTarget: p95s.every((v) => v < TARGET_MS),
      totalsEqualLedger: equal,
      tooLarge,
      seedSeconds,
      loadAverage: { before: loadBefore, after: loadavg().map((l) => Math.round(l * 100) / 100) },
    };
    console.log(JSON.stringify(figures));
    if (!equal) process.exitCode = 1;
  } finally {
    await p?.close();
  }
}

// Run when started (not when bench:console imports seedOrg).
if (require.main === module) {
  main().catch((err: Error) => {
    console.error(err.stack ?? err.message);
    process.exit(1);
  });
}
