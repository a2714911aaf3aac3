import { AddressInfo, Server, Socket, createServer } from 'node:net';

export { type OwnRedis, startOwnRedis } from '../../tools/redis-cluster/own-redis';

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
