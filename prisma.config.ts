import path from 'node:path';
import { defineConfig } from 'prisma/config';
import { PrismaPg } from '@prisma/adapter-pg';

// Prisma 6.19's own schema engine is downloaded at install time, which this project cannot do;
// the WebAssembly engine with the pg adapter runs every CLI command offline (STACK-NOTES.md).
function pgConnectionFields(url: string) {
  const u = new URL(url);
  // Separate fields, not a connectionString: with a connectionString the adapter would ignore
  // the shadow database's name.
  return {
    host: u.hostname,
    port: Number(u.port || 5432),
    user: decodeURIComponent(u.username || 'postgres'),
    password: decodeURIComponent(u.password),
    database: u.pathname.slice(1) || 'postgres',
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
