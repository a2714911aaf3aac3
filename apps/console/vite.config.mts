import react from '@vitejs/plugin-react';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));

// Served by the admin API under /console/ on the same origin (no CORS, no second server).
// `npm run build` writes dist/console; the dev server proxies the API to a running admin API.
export default defineConfig({
  root: here,
  base: '/console/',
  plugins: [react()],
  // The few lib modules the console shares with the API: each imports nothing (browser-safe).
  resolve: {
    alias: { '@tollgate/reporting/row-label': path.resolve(here, '../../libs/reporting/src/row-label.ts') },
  },
  build: {
    outDir: path.resolve(here, '../../dist/console'),
    emptyOutDir: true,
    sourcemap: true,
    chunkSizeWarningLimit: 1500,
  },
  server: { proxy: { '/v1': 'http://127.0.0.1:4001' } },
});
