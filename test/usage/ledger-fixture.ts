import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { cloneDatabase, databaseUrl, dropDatabase, REPO_ROOT } from '@tollgate/testing';
import { Client } from 'pg';
import { expect } from 'vitest';

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

/**
 * `prisma migrate deploy` of a migration whose fill holds the ledger in SHARE mode, as an operator runs
 * it with the worker writing: a batch (written by the old trigger) not yet committed when it starts,
 * which the fill waits for, and another arriving meanwhile (through the new trigger), which queues
 * behind the fill; `meanwhile` (if given) starts then too, e.g. a key's tag move. Resolves once the
 * migration has finished and everything started is in.
 */
export async function deployWithBatchesInFlight(
  db: Client,
  connect: () => Promise<Client>,
  database: string,
  org: LedgerOrg,
  meanwhile?: () => Promise<unknown>,
): Promise<void> {
  const inFlight = await connect();
  await inFlight.query('BEGIN');
  await insertLedgerBatch(inFlight, org, 300, 5000);
  const migrated = deployMigrations(database);
  // The fill waits for the batch in flight: it holds the ledger's lock for writers.
  await expect.poll(() => lockWaits(db, 'UsageEvent', { mode: 'ShareLock' })).toBe(1);
  const next = await connect();
  const nextPid = (await next.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  const nextBatch = insertLedgerBatch(next, org, 300, 9000);
  await expect.poll(() => lockWaits(db, 'UsageEvent', { pid: nextPid })).toBe(1);
  const other = meanwhile?.();
  await inFlight.query('COMMIT');
  await migrated;
  await nextBatch;
  await other;
}

/** A test file's own database (a clone of the run's template): its first client, more on demand, and close() to end them and drop it. */
export interface LedgerDatabase {
  name: string;
  db: Client;
  connect(): Promise<Client>;
  close(): Promise<void>;
}

export async function cloneLedgerDatabase(template: string): Promise<LedgerDatabase> {
  const name = await cloneDatabase(template);
  const clients: Client[] = [];
  const connect = async () => {
    const c = new Client({ connectionString: databaseUrl(name) });
    await c.connect();
    clients.push(c);
    return c;
  };
  return {
    name,
    db: await connect(),
    connect,
    close: async () => {
      await Promise.allSettled(clients.map((c) => c.end()));
      await dropDatabase(name);
    },
  };
}

/**
 * The `CREATE OR REPLACE FUNCTION` statements of these functions as a migration wrote them: run on a
 * migrated database, they put its functions back as they were before a later migration.
 */
export function migrationFunctions(migration: string, names: string[]): string {
  const sql = readFileSync(path.join(REPO_ROOT, 'prisma/migrations', migration, 'migration.sql'), 'utf8');
  return names
    .map((name) => {
      const fn = new RegExp(`^CREATE OR REPLACE FUNCTION ${name}\\([\\s\\S]*?^END ';$`, 'm').exec(sql);
      if (!fn) throw new Error(`${migration} has no function ${name}`);
      return fn[0];
    })
    .join('\n');
}
