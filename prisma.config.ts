import path from 'node:path';
import { defineConfig } from 'prisma/config';
import { PrismaPg } from '@prisma/adapter-pg';
import { parse } from 'pg-connection-string';

// Prisma 6.19's own schema engine is downloaded at install time, which this project cannot do;
// the WebAssembly engine with the pg adapter runs every CLI command offline (STACK-NOTES.md).
export function pgConnectionFields(url: string) {
  // Parsed as the runtime's pool parses DATABASE_URL (pg-connection-string), so `sslmode`,
  // `sslrootcert` and the rest mean the same to migrations as to the processes. Separate fields,
  // not a connectionString: with a connectionString the adapter would ignore the shadow database's name.
  const c = parse(url);
  return {
    host: c.host ?? '127.0.0.1',
    port: Number(c.port || 5432),
    user: c.user || 'postgres',
    password: c.password ?? '',
    database: c.database || 'postgres',
    ...(c.ssl !== undefined ? { ssl: c.ssl as boolean | object } : {}),
  };
}

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  schema: path.join('prisma', 'schema.prisma'),
  adapter: async () => {
    const url = process.env.DATABASE_URL;
    if (!url) throw new Error('DATABASE_URL is required for prisma CLI commands');
    return new PrismaPg(pgConnectionFields(url));
  },
});
