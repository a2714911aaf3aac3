import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { adminDatabaseUrl, REPO_ROOT } from '@tollgate/testing';
import { Client } from 'pg';
import { describe, expect, it } from 'vitest';

/**
 * `prisma migrate deploy` reads DATABASE_URL as the processes do (prisma.config.ts parses it with
 * pg-connection-string): `sslmode=require` against a server without TLS fails instead of going on
 * in plaintext. Skipped when the test server itself has TLS on.
 */
describe('migrations honour sslmode like the runtime', () => {
  it('should refuse to migrate in plaintext when DATABASE_URL asks for TLS', async () => {
    const admin = new Client({ connectionString: adminDatabaseUrl() });
    await admin.connect();
    const ssl = (await admin.query<{ ssl: string }>('SHOW ssl')).rows[0].ssl;
    await admin.end();
    if (ssl === 'on') return;
    const url = new URL(adminDatabaseUrl());
    url.searchParams.set('sslmode', 'require');
    const run = promisify(execFile)(
      process.execPath,
      [path.join(REPO_ROOT, 'node_modules/prisma/build/index.js'), 'migrate', 'status'],
      { cwd: REPO_ROOT, env: { ...process.env, DATABASE_URL: url.toString(), PRISMA_HIDE_UPDATE_MESSAGE: '1' } },
    );
    await expect(run).rejects.toMatchObject({ stderr: expect.stringMatching(/does not support SSL/) });
  });
});
