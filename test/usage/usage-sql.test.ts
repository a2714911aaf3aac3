import { readFileSync } from 'node:fs';
import path from 'node:path';
import { cloneDatabase, databaseUrl, dropDatabase, REPO_ROOT } from '@tollgate/testing';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

// In test/, not beside the SQL: a libs/usage spec may not import libs/testing, which imports libs/usage.
const SQL_DIR = path.join(REPO_ROOT, 'libs/usage/src/sql');
const SQL_FILES = ['usage-rollups.sql', 'ledger-partitions.sql'];

interface FunctionSource {
  name: string;
  args: string;
  returns: string;
  body: string;
}

/** Trailing blanks and the blank lines around a body do not count; everything else does. */
function normalized(text: string): string {
  return text
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trim();
}

function sourcesOf(sql: string): { functions: FunctionSource[]; triggers: string[] } {
  const functions = [
    ...sql.matchAll(
      /^CREATE OR REPLACE FUNCTION (\w+)\(([^)]*)\) RETURNS (\w+) LANGUAGE plpgsql AS \$body\$([\s\S]*?)\$body\$;$/gm,
    ),
  ].map(([, name, args, returns, body]) => ({ name, args, returns, body: normalized(body) }));
  const triggers = [...sql.matchAll(/^(CREATE TRIGGER [^;]*);$/gm)].map(([, def]) => def);
  return { functions, triggers };
}

describe('the usage SQL (libs/usage/src/sql) against the migrated database', () => {
  let database: string;
  let db: Client;

  beforeAll(async () => {
    database = await cloneDatabase(inject('templateDatabase'));
    db = new Client({ connectionString: databaseUrl(database) });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    if (database) await dropDatabase(database);
  });

  it.each(SQL_FILES)(
    'should find every function and trigger of %s in the migrated database exactly as written there',
    async (file) => {
      const { functions, triggers } = sourcesOf(readFileSync(path.join(SQL_DIR, file), 'utf8'));
      expect(functions.length).toBeGreaterThan(0);
      for (const fn of functions) {
        const { rows } = await db.query<{ args: string; returns: string; body: string }>(
          `SELECT pg_get_function_arguments(p.oid) AS args, pg_get_function_result(p.oid) AS returns, p.prosrc AS body
           FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
           WHERE n.nspname = 'public' AND p.proname = $1`,
          [fn.name],
        );
        expect(rows, `${fn.name}: one function of that name in the database`).toHaveLength(1);
        // A failure here: a migration changed the function and this file was not (or the reverse).
        expect(
          { args: rows[0].args, returns: rows[0].returns, body: normalized(rows[0].body) },
          `${fn.name} in the migrated database differs from ${file}: edit the file and apply it in a migration`,
        ).toEqual({ args: fn.args, returns: fn.returns, body: fn.body });
      }
      for (const def of triggers) {
        const name = /^CREATE TRIGGER "([^"]+)"/.exec(def)![1];
        const { rows } = await db.query<{ def: string }>(
          `SELECT pg_get_triggerdef(t.oid) AS def FROM pg_trigger t WHERE NOT t.tgisinternal AND t.tgname = $1`,
          [name],
        );
        expect(
          rows.map((r) => r.def.replaceAll('public.', '')),
          `trigger ${name}`,
        ).toEqual([def]);
      }
    },
  );

  it('should cover every plpgsql function of the migrated database, so none lives only in a migration', async () => {
    const written = SQL_FILES.flatMap(
      (file) => sourcesOf(readFileSync(path.join(SQL_DIR, file), 'utf8')).functions,
    ).map((f) => f.name);
    const { rows } = await db.query<{ name: string }>(
      `SELECT p.proname AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
       JOIN pg_language l ON l.oid = p.prolang WHERE n.nspname = 'public' AND l.lanname = 'plpgsql'`,
    );
    expect(rows.map((r) => r.name).sort()).toEqual([...written].sort());
  });
});
