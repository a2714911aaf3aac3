import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';

export const REPO_ROOT = path.resolve(__dirname, '../../..');

/** The server tests create their databases on; override with TEST_DATABASE_URL. */
export function adminDatabaseUrl(): string {
  return process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
}

export function databaseUrl(name: string): string {
  const u = new URL(adminDatabaseUrl());
  u.pathname = `/${name}`;
  return u.toString();
}

async function withAdminClient<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: adminDatabaseUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

/** Applies the migrations with `prisma migrate deploy`, exactly as production does. */
export async function migrateDatabase(url: string): Promise<void> {
  await promisify(execFile)(
    process.execPath,
    [path.join(REPO_ROOT, 'node_modules/prisma/build/index.js'), 'migrate', 'deploy'],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, DATABASE_URL: url, PRISMA_HIDE_UPDATE_MESSAGE: '1' },
    },
  );
}

export async function createTemplateDatabase(): Promise<string> {
  const name = uniqueName('tollgate_tpl');
  await withAdminClient((c) => c.query(`CREATE DATABASE "${name}"`));
  await migrateDatabase(databaseUrl(name));
  return name;
}

export async function cloneDatabase(template: string): Promise<string> {
  const name = uniqueName('tollgate_test');
  await withAdminClient((c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
  return name;
}

export async function dropDatabase(name: string): Promise<void> {
  await withAdminClient((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}
