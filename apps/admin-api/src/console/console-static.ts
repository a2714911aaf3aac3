import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { existsSync } from 'node:fs';
import path from 'node:path';

export const CONSOLE_PATH = '/console';

// The console reaches only its own origin (the admin API); styles include Mantine's inline ones.
const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/** dist/console, from the compiled app (dist/apps/admin-api/src/console) or from the sources (tests). */
export function findConsoleDir(): string | null {
  const candidates = [
    path.resolve(__dirname, '../../../../console'),
    path.resolve(__dirname, '../../../../dist/console'),
  ];
  return candidates.find((dir) => existsSync(path.join(dir, 'index.html'))) ?? null;
}

/**
 * Serves the built console at /console/ on the admin API's own origin, so it calls the same
 * routes with the same checks as any client. Files are public (no data in them); hashed assets
 * are cached for a year, index.html is revalidated on every load so a deploy shows at once.
 */
export function mountConsole(app: NestExpressApplication, dir: string | null): void {
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (req.method === 'GET' && req.path === '/') return res.redirect(302, `${CONSOLE_PATH}/`);
    // Browsers ask the origin for its icon on every page (the OAuth sign-in pages too).
    if (req.method === 'GET' && req.path === '/favicon.ico' && dir)
      return res.redirect(301, `${CONSOLE_PATH}/favicon.svg`);
    next();
  });
  if (!dir) {
    app.use(CONSOLE_PATH, (_req: Request, res: Response) => {
      res.status(404).type('text/plain').send('The console is not built: run `npm run build` (or `npm start`).');
    });
    return;
  }
  app.useStaticAssets(dir, {
    prefix: `${CONSOLE_PATH}/`,
    index: false,
    redirect: false,
    fallthrough: true,
    setHeaders: (res, file) => {
      res.setHeader('X-Content-Type-Options', 'nosniff');
      if (file.includes(`${path.sep}assets${path.sep}`))
        res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
      else res.setHeader('Cache-Control', 'no-cache');
      if (file.endsWith('.html')) res.setHeader('Content-Security-Policy', CONSOLE_CSP);
    },
  });
  // Client-side routes (/console/explorer, ...) get the app's page; unknown assets stay 404.
  const index = path.join(dir, 'index.html');
  app.use(CONSOLE_PATH, (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    if (req.path.startsWith('/assets/')) return res.status(404).type('text/plain').send('not found');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('Content-Security-Policy', CONSOLE_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.sendFile(index, (err) => {
      // Only while a build replaces dist/console.
      if (err && !res.headersSent)
        res
          .status(503)
          .setHeader('Retry-After', '5')
          .type('text/plain')
          .send('The console is being built; try again in a moment.');
    });
  });
}
