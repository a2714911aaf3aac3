import { once } from 'node:events';
import { AddressInfo } from 'node:net';
import { createServer, Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { keepAliveFetch } from './keep-alive-fetch';

/**
 * An upstream that drops a kept-alive socket as the next request arrives (what an idle timeout
 * racing a new request looks like to the client) must not fail that request: it was never read.
 */
describe('keepAliveFetch', () => {
  let server: Server | undefined;

  afterEach(async () => {
    server?.closeAllConnections();
    server?.close();
  });

  async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
    server = createServer(handler);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  }

  it('should send a request again on a fresh socket when the reused one is reset before any answer', async () => {
    const served: string[] = [];
    const url = await listen((req, res) => {
      const first = (req.socket as { served?: number }).served === undefined;
      (req.socket as { served?: number }).served = 1;
      if (!first) {
        // The second request on a kept-alive socket: dropped unread, as an idle close would.
        req.socket.destroy();
        return;
      }
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        served.push(body);
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ got: body }));
      });
    });

    const one = await keepAliveFetch(url, { method: 'POST', body: 'one' });
    expect(await one.json()).toEqual({ got: 'one' });
    const two = await keepAliveFetch(url, { method: 'POST', body: 'two' });
    expect(await two.json()).toEqual({ got: 'two' });
    expect(served).toEqual(['one', 'two']);
  });

  it('should fail a request whose fresh socket is reset (nothing to retry on)', async () => {
    const url = await listen((req) => req.socket.destroy());
    await expect(keepAliveFetch(url, { method: 'POST', body: 'x' })).rejects.toMatchObject({ code: 'ECONNRESET' });
  });
});
