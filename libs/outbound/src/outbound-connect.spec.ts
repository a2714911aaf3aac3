import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundAddressRule } from './outbound-address-rule';
import { outboundDispatcher, outboundFetch, outboundLookup } from './outbound-connect';
import { HostResolver, OutboundGuard, checkOutboundUrl } from './outbound-guard';
import { OutboundException, OutboundExceptionCode, outboundExceptionIn } from './outbound.exception';

// Two servers on one port: 127.0.0.2 stands for a public host (allowed below), 127.0.0.1 for an
// internal service no tenant may reach. Linux routes all of 127/8 to loopback.
const ALLOWED_HOST = '127.0.0.2';
let port: number;
const hits = { allowed: 0, internal: 0 };
let internal: http.Server;
let allowed: http.Server;

function listen(server: http.Server, host: string, p: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(p, host, () => resolve((server.address() as AddressInfo).port));
  });
}

beforeAll(async () => {
  internal = http.createServer((_req, res) => {
    hits.internal++;
    res.end('internal secret');
  });
  allowed = http.createServer((req, res) => {
    hits.allowed++;
    if (req.url === '/redirect') {
      res.writeHead(302, { location: `http://127.0.0.1:${port}/` });
      return res.end();
    }
    if (req.url === '/redirect-by-name') {
      res.writeHead(302, { location: `http://internal.test:${port}/` });
      return res.end();
    }
    // No keep-alive: every request needs a new connection, so a new lookup.
    res.writeHead(200, { connection: 'close' });
    res.end(`hello ${req.headers.host}`);
  });
  port = await listen(internal, '127.0.0.1', 0);
  await listen(allowed, ALLOWED_HOST, port);
});

afterAll(async () => {
  await new Promise((r) => internal.close(r));
  await new Promise((r) => allowed.close(r));
});

/** A resolver whose answers for a name change from one lookup to the next, as a rebinding DNS server's would. */
function rebindingResolver(answers: Record<string, string[]>): HostResolver {
  const seen = new Map<string, number>();
  return async (hostname) => {
    const list = answers[hostname];
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    const n = seen.get(hostname) ?? 0;
    seen.set(hostname, n + 1);
    return [{ address: list[Math.min(n, list.length - 1)], family: 4 }];
  };
}

const rule = new OutboundAddressRule([`${ALLOWED_HOST}/32`]);

describe('outboundDispatcher (undici)', () => {
  it('should connect to an allowed address and keep the name in the Host header', async () => {
    const guard = new OutboundGuard(rule, rebindingResolver({ 'public.test': [ALLOWED_HOST] }));
    const res = await outboundFetch(outboundDispatcher({}, guard))(`http://public.test:${port}/`);
    expect(await res.text()).toBe(`hello public.test:${port}`);
  });

  it('should refuse an IP-literal host in a refused range without connecting', async () => {
    const before = hits.internal;
    const guard = new OutboundGuard(rule);
    const err = await outboundFetch(outboundDispatcher({}, guard))(`http://127.0.0.1:${port}/`).catch(
      (e: unknown) => e,
    );
    expect(outboundExceptionIn(err)?.message).toContain('127.0.0.1 is a loopback address');
    expect(hits.internal).toBe(before);
  });

  it('should check every connection when DNS rebinds a name to loopback after a first allowed answer', async () => {
    const before = hits.internal;
    const guard = new OutboundGuard(rule, rebindingResolver({ 'rebind.test': [ALLOWED_HOST, '127.0.0.1'] }));
    const dispatcher = outboundDispatcher({}, guard);
    const first = await outboundFetch(dispatcher)(`http://rebind.test:${port}/`);
    expect(await first.text()).toBe(`hello rebind.test:${port}`);
    const second = await outboundFetch(dispatcher)(`http://rebind.test:${port}/`).catch((e: unknown) => e);
    const refused = outboundExceptionIn(second);
    expect(refused?.code).toBe(OutboundExceptionCode.AddressRefused);
    expect(refused?.message).toContain('rebind.test resolves to 127.0.0.1, a loopback address');
    expect(hits.internal).toBe(before);
    await dispatcher.close();
  });

  it.each([
    ['an address', '/redirect'],
    ['a name', '/redirect-by-name'],
  ])('should refuse a redirect from an allowed host to loopback given as %s', async (_kind, path) => {
    const before = hits.internal;
    const guard = new OutboundGuard(
      rule,
      rebindingResolver({ 'public.test': [ALLOWED_HOST], 'internal.test': ['127.0.0.1'] }),
    );
    const err = await outboundFetch(outboundDispatcher({}, guard))(`http://public.test:${port}${path}`).catch(
      (e: unknown) => e,
    );
    expect(outboundExceptionIn(err)?.message).toMatch(/127\.0\.0\.1.*loopback address.*OUTBOUND_ALLOW_CIDRS/);
    expect(hits.internal).toBe(before);
  });
});

describe('outboundLookup (node:http agents)', () => {
  function get(agent: http.Agent, url: string): Promise<string> {
    return new Promise((resolve, reject) => {
      http
        .get(url, { agent }, (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve(body));
        })
        .on('error', reject);
    });
  }

  it('should answer only allowed addresses, on every new connection', async () => {
    const before = hits.internal;
    const guard = new OutboundGuard(rule, rebindingResolver({ 'rebind.test': [ALLOWED_HOST, '127.0.0.1'] }));
    const agent = new http.Agent({ keepAlive: true, lookup: outboundLookup(guard) });
    expect(await get(agent, `http://rebind.test:${port}/`)).toBe(`hello rebind.test:${port}`);
    const err = await get(agent, `http://rebind.test:${port}/`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundException);
    expect((err as Error).message).toContain('rebind.test resolves to 127.0.0.1, a loopback address');
    expect(hits.internal).toBe(before);
    agent.destroy();
  });
});

describe('checkOutboundUrl', () => {
  const guard = new OutboundGuard(
    new OutboundAddressRule(),
    rebindingResolver({ 'mixed.test': ['127.0.0.1'], 'public.test': ['93.184.215.14'] }),
  );

  it.each([
    ['http://127.0.0.1:8080/mcp', '127.0.0.1 is a loopback address'],
    ['http://[::1]:8080/mcp', '::1 is a loopback address'],
    ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1 is a loopback address'],
    ['http://0x7f.1/', '127.0.0.1 is a loopback address'],
    ['http://10.0.0.1/', '10.0.0.1 is a private address'],
    ['http://169.254.169.254/latest/meta-data', '169.254.169.254 is a link-local address'],
    ['http://[fd00::1]/', 'fd00::1 is a unique-local address'],
    ['http://0.0.0.0/', '0.0.0.0 is an unspecified address'],
    ['http://mixed.test/', 'mixed.test resolves to 127.0.0.1, a loopback address'],
  ])('should refuse %s naming the rule', async (url, message) => {
    const err = (await checkOutboundUrl(url, guard).catch((e: unknown) => e)) as OutboundException;
    expect(err).toBeInstanceOf(OutboundException);
    expect(err.code).toBe(OutboundExceptionCode.AddressRefused);
    expect(err.message).toContain(message);
    expect(err.message).toContain('OUTBOUND_ALLOW_CIDRS');
  });

  it.each([
    ['http://user:pass@public.test/', 'must not contain credentials'],
    ['ftp://public.test/', 'must use http or https'],
    ['file:///etc/passwd', 'must use http or https'],
  ])('should refuse the URL %s', async (url, message) => {
    const err = (await checkOutboundUrl(url, guard).catch((e: unknown) => e)) as OutboundException;
    expect(err.code).toBe(OutboundExceptionCode.UrlRefused);
    expect(err.message).toContain(message);
  });

  it('should accept a public name, and a name that does not resolve yet (connections are checked anyway)', async () => {
    await expect(checkOutboundUrl('https://public.test/mcp', guard)).resolves.toBeInstanceOf(URL);
    await expect(checkOutboundUrl('https://nowhere.test/mcp', guard)).resolves.toBeInstanceOf(URL);
  });
});
