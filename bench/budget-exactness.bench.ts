/**
 * `npm run bench:budget`: two edge processes, 64 concurrent agents on one key whose budget allows
 * exactly N calls. Exactly N must succeed, the ledger must hold N charged rows, and the Redis
 * counters must equal the ledger, at every level.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { performance } from 'node:perf_hooks';
import { BenchPlatform, benchRedisMode, seedGovernedOrg, startBenchPlatform } from './support/bench-platform';
import { orgKeyOf } from '@tollgate/redis';

const PRICE = 1_000;

async function main(): Promise<void> {
  const allowed = Number(process.env.BENCH_BUDGET_CALLS ?? 500);
  const agents = Number(process.env.BENCH_AGENTS ?? 64);
  let p: BenchPlatform | undefined;
  const clients: Client[] = [];
  try {
    p = await startBenchPlatform({ edges: 2 });
    const org = await seedGovernedOrg(p, PRICE);
    await p.api('PUT', `/v1/orgs/${org.orgId}/budgets`, {
      scope: 'KEY',
      scopeId: org.keyId,
      period: 'MONTH',
      limitMicros: allowed * PRICE,
    });
    await p.api('PUT', `/v1/orgs/${org.orgId}/budgets`, {
      scope: 'TEAM',
      scopeId: org.teamId,
      period: 'DAY',
      limitMicros: allowed * PRICE * 10,
    });
    await p.api('PUT', `/v1/orgs/${org.orgId}/budgets`, {
      scope: 'ORG',
      scopeId: org.orgId,
      period: 'TOTAL',
      limitMicros: allowed * PRICE * 100,
    });

    for (let i = 0; i < agents; i++) {
      const c = new Client({ name: `agent-${i}`, version: '1' });
      const edge = p.edgeUrls[i % p.edgeUrls.length];
      await c.connect(
        new StreamableHTTPClientTransport(new URL(`${edge}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${org.key}` } },
        }),
      );
      clients.push(c);
    }

    let succeeded = 0;
    let refused = 0;
    let otherErrors = 0;
    const callIds: string[] = [];
    const started = performance.now();
    // Each agent calls until the budget refuses it.
    await Promise.all(
      clients.map(async (c) => {
        for (;;) {
          const res = (await c.callTool({ name: 'fixture__ping', arguments: {} })) as CallToolResult;
          const code = (res._meta?.['tollgate/error'] as { code?: string } | undefined)?.code;
          if (!res.isError) {
            succeeded++;
            callIds.push((res._meta?.['tollgate/call'] as { callId: string }).callId);
          } else if (code === 'BUDGET_EXCEEDED') {
            refused++;
            return;
          } else {
            otherErrors++;
            return;
          }
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;

    // The worker drains the usage queue; wait until every successful call is in the ledger.
    const deadline = Date.now() + 120_000;
    let ledgerRows = 0;
    while (Date.now() < deadline) {
      ledgerRows = Number(
        (await p.db.query('SELECT count(*) AS n FROM "UsageEvent" WHERE "keyId" = $1', [org.keyId])).rows[0].n,
      );
      if (ledgerRows >= succeeded) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const ledger = (
      await p.db.query(
        'SELECT count(*) FILTER (WHERE "costMicros" > 0) AS charged, COALESCE(sum("costMicros"), 0)::text AS spent FROM "UsageEvent" WHERE "keyId" = $1',
        [org.keyId],
      )
    ).rows[0];

    // Redis counters of every budget level, against the ledger: while the edges run (they may still
    // hold leased allowance), and once they have stopped (which gives every lease back).
    const readCounters = async () => {
      const out: Record<string, { spent: string; reserved: string; leased: string }> = {};
      for (const k of await scanKeys(p!, `${orgKeyOf(p!.env.REDIS_PREFIX, org.orgId)}:budget:*`)) {
        const [spent, reserved, leased] = await p!.redis.hmget(k, 'spent', 'reserved', 'leased');
        out[k.split(':budget:')[1]] = { spent: spent ?? '0', reserved: reserved ?? '0', leased: leased ?? '0' };
      }
      return out;
    };
    await Promise.allSettled(clients.map((c) => c.close()));
    const whileRunning = await readCounters();
    await p.stopEdges();
    const counters = await readCounters();
    const countersEqualLedger =
      Object.values(counters).length === 3 &&
      Object.values(counters).every((c) => c.spent === ledger.spent && c.reserved === '0' && c.leased === '0');
    const spentEqualLedgerWhileRunning = Object.values(whileRunning).every((c) => c.spent === ledger.spent);

    const figures = {
      bench: 'budget-exactness',
      redis: benchRedisMode(),
      edges: p.edgeUrls.length,
      agents,
      budgetAllowsCalls: allowed,
      succeeded,
      refusedBudget: refused,
      otherErrors,
      ledgerRows,
      ledgerChargedRows: Number(ledger.charged),
      ledgerSpentMicros: Number(ledger.spent),
      redisCountersWhileRunning: whileRunning,
      redisCounters: counters,
      spentEqualLedgerWhileRunning,
      countersEqualLedger,
      exact:
        succeeded === allowed &&
        Number(ledger.charged) === allowed &&
        countersEqualLedger &&
        spentEqualLedgerWhileRunning &&
        otherErrors === 0,
      callsPerSecond: Math.round((succeeded + refused) / seconds),
    };
    console.log(
      `\nBudget exactness: ${agents} agents on ${p.edgeUrls.length} edges, budget for exactly ${allowed} calls; Redis: ${benchRedisMode()}`,
    );
    console.log(
      `  succeeded ${succeeded}, refused ${refused}, other errors ${otherErrors}; ledger ${ledgerRows} rows (${ledger.charged} charged, ${ledger.spent} micro-units)`,
    );
    console.log(
      `  Redis counters equal the ledger at every level: spent while the edges run ${spentEqualLedgerWhileRunning}; spent, nothing reserved or leased once they stopped ${countersEqualLedger}`,
    );
    console.log(JSON.stringify(figures));
    if (!figures.exact) process.exitCode = 1;
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    await p?.close();
  }
}

/** Keys on every master when the bench runs on a cluster (BENCH_REDIS=cluster). */
function scanKeys(p: BenchPlatform, match: string): Promise<string[]> {
  return p.scanKeys(match);
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exit(1);
});
