// A redis-server of one's own on a free loopback port, for tests and benches that take Redis down:
// killed, restarted (from its append-only file when it persists), stopped.
import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../ports/free-port';

/** A redis-server of the test's own on a free port (never the shared one), to take down at will. */
export interface OwnRedis {
  url: string;
  /** SIGKILL: Redis is gone at once, mid-conversation. */
  kill(): Promise<void>;
  /** A new redis-server on the same port (empty unless `persist`); clients reconnect to it. */
  restart(): Promise<void>;
  /** Whether its redis-server is up (not killed or stopped since it last started). */
  running(): boolean;
  /** Kills it for good and removes its directory. */
  stop(): Promise<void>;
}

/** `persist`: an append-only file synced on every write, so a restart after a kill loses nothing. */
export async function startOwnRedis(opts: { persist?: boolean } = {}): Promise<OwnRedis> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'tg-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess;
  let exited: Promise<void>;
  const start = async () => {
    const aof = opts.persist ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...aof, '--dir', dir], {
      stdio: 'ignore',
    });
    exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => 50, maxRetriesPerRequest: null });
    // Refused until the server listens: retried.
    probe.on('error', () => undefined);
    await probe.connect().catch(() => undefined);
    await probe.ping();
    probe.disconnect();
  };
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    url,
    kill,
    async restart() {
      await kill();
      await start();
    },
    running: () => child.exitCode === null && child.signalCode === null,
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
