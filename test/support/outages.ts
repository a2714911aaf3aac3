import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { AddressInfo, Server, Socket, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';

/** A redis-server of the test's own on a free port (never the shared one), to take down at will. */
export interface OwnRedis {
  url: string;
  /** SIGKILL: Redis is gone at once, mid-conversation. */
  kill(): Promise<void>;
  /** A new redis-server on the same port (empty unless `persist`); clients reconnect to it. */
  restart(): Promise<void>;
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
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A TCP proxy to `target` (the shared Postgres): closing it is Postgres going away for whoever connected through it. */
export interface TcpProxy {
  port: number;
  /** Stops listening and cuts every open connection. */
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    upstream.connect(targetPort, targetHost);
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}
