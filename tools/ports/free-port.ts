import { createServer } from 'node:net';

/** A port free right now, so a test can give the apps fixed public URLs before they start. */
export async function freePort(): Promise<number> {
  // Below Linux's ephemeral range (32768-60999): a port the kernel hands out for listen(0) may be
  // taken by any outgoing connection before the app listens on it (EADDRINUSE, seen in CI).
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const server = createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) continue;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }
}
