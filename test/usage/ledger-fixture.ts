import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { databaseUrl, REPO_ROOT } from '@tollgate/testing';
import { Client } from 'pg';

/** An org of the usage SQL's tests: two teams, three users, four keys (tag sets as given), two upstreams. */
export interface LedgerOrg {
  orgId: string;
  teams: string[];
  users: string[];
  keys: string[];
  upstreams: string[];
}

/** The org and its people and keys, by SQL (no app running); `name` makes its slug, emails and key prefixes. */
export async function createLedgerOrg(
  db: Client,
  name: string,
  timeZone: string,
  tagSets: string[][] = [[], [], [], []],
): Promise<LedgerOrg> {
  const org: LedgerOrg = {
    orgId: randomUUID(),
    teams: [randomUUID(), randomUUID()],
    users: [randomUUID(), randomUUID(), randomUUID()],
    keys: [randomUUID(), randomUUID(), randomUUID(), randomUUID()],
    upstreams: [randomUUID(), randomUUID()],
  };
  const { orgId } = org;
  await db.query(
    `INSERT INTO "Organization" ("id", "name", "slug", "timeZone", "updatedAt") VALUES ($1, $2, $3, $4, now())`,
    [orgId, name, `${name.toLowerCase()}-${orgId.slice(0, 8)}`, timeZone],
  );
  for (const [i, id] of org.teams.entries())
    await db.query(`INSERT INTO "Team" ("id", "orgId", "name", "updatedAt") VALUES ($1, $2, $3, now())`, [
      id,
      orgId,
      `team-${i}`,
    ]);
  for (const [i, id] of org.users.entries())
    await db.query(`INSERT INTO "User" ("id", "orgId", "email", "updatedAt") VALUES ($1, $2, $3, now())`, [
      id,
      orgId,
      `u${i}@${name.toLowerCase()}.test`,
    ]);
  for (const [i, id] of org.keys.entries())
    await db.query(
      `INSERT INTO "VirtualKey" ("id", "orgId", "teamId", "userId", "name", "prefix", "secretHash", "tags", "updatedAt")
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())`,
      [
        id,
        orgId,
        org.teams[i % 2],
        org.users[i % 3],
        `k${i}`,
        `tg_${name.slice(0, 1).toLowerCase()}${i}`,
        randomUUID(),
        tagSets[i],
      ],
    );
  return org;
}

/** A batch of n events in one INSERT (the ledger's statement trigger sees it as one), spread over 70 days. */
export function insertLedgerBatch(c: Client, org: LedgerOrg, n: number, seed: number) {
  return c.query(
    `INSERT INTO "UsageEvent" ("id", "orgId", "teamId", "userId", "keyId", "upstreamId", "toolName", "outcome",
                               "costMicros", "outputTokens", "latencyMs", "occurredAt")
     SELECT gen_random_uuid()::text, $1::uuid, ($2::uuid[])[1 + (k % 2)], ($3::uuid[])[1 + (k % 3)], ($4::uuid[])[1 + k],
            ($5::uuid[])[1 + (i % 2)], 'tool_' || (i % 5),
            (CASE WHEN i % 7 = 0 THEN 'TOOL_ERROR' ELSE 'OK' END)::"UsageOutcome",
            1000 + (i * 7919) % 5000, (i * 31) % 700, 20,
            date_trunc('hour', now()) - make_interval(mins => (i * 97) % (70 * 24 * 60))
     FROM (SELECT i, (i * 13 + $6::int) % 4 AS k FROM generate_series($6::int, $6::int + $7::int - 1) AS i) s`,
    [org.orgId, org.teams, org.users, org.keys, org.upstreams, seed, n],
  );
}

/** Rows of a query (one `line` column) as sorted lines, to compare whole tables. */
export async function sortedLines(c: Client, sql: string): Promise<string[]> {
  return (await c.query<{ line: string }>(sql)).rows.map((r) => r.line).sort();
}

/** `prisma migrate deploy` on a test database, as an operator runs it (resolves once it has finished). */
export function deployMigrations(database: string): Promise<unknown> {
  return promisify(execFile)(
    process.execPath,
    [path.join(REPO_ROOT, 'node_modules/prisma/build/index.js'), 'migrate', 'deploy'],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl(database), PRISMA_HIDE_UPDATE_MESSAGE: '1' },
    },
  );
}

/** Whether the migration is recorded as applied to the database `c` is connected to. */
export async function migrationApplied(c: Client, name: string): Promise<boolean> {
  const { rows } = await c.query(
    `SELECT 1 FROM "_prisma_migrations" WHERE "migration_name" = $1 AND "finished_at" IS NOT NULL`,
    [name],
  );
  return rows.length === 1;
}

/**
 * How many lock requests on a relation of that name in this database wait (of one session, or in one
 * mode, if given). pg_locks is the cluster's: test files run at once on databases cloned from one
 * template, whose relations share their oids.
 */
export async function lockWaits(
  c: Client,
  relation: string,
  by: { pid?: number; mode?: string } = {},
): Promise<number> {
  const { rows } = await c.query(
    `SELECT 1 FROM pg_locks l JOIN pg_class r ON r.oid = l.relation
     WHERE NOT l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND r.relname = $1 AND ($2::int IS NULL OR l.pid = $2) AND ($3::text IS NULL OR l.mode = $3)`,
    [relation, by.pid ?? null, by.mode ?? null],
  );
  return rows.length;
}
