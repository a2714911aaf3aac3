/**
 * The overhead benchmark's floor: a bare pass-through proxy (node:http in, undici out, no
 * governance) between the same client and upstream, in its own process, so the edge's cost can be
 * read against the cost of any hop on this machine. PROXY_TARGET_URL: the upstream. Prints its URL.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const target = new URL(process.env.PROXY_TARGET_URL ?? '');
const pool = new Pool(target.origin, { connections: 256 });

const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    pool
      .request({
        path: target.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: req.headers.accept ?? 'application/json' },
        body: Buffer.concat(chunks),
      })
      .then(async (up) => {
        const body = Buffer.from(await up.body.arrayBuffer());
        res.writeHead(up.statusCode, {
          'Content-Type': String(up.headers['content-type'] ?? 'application/json'),
          'Content-Length': body.length,
        });
        res.end(body);
      })
      .catch(() => {
        res.writeHead(502, { 'Content-Length': 0 });
        res.end();
      });
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` })}\n`,
  );
});
