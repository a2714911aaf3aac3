import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { orgKeyOf } from '@tollgate/redis';
import {
  callMeta,
  connectAgent,
  TEST_REDIS_MODES,
  testRedisClient,
  textOf,
  waitForUsageEvents,
} from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, startFixtureServer } from '../fixtures/http-fixture-server';
import { GovernedUpstream, governUpstream, startAnotherEdge } from '../support/governed-upstream';
import { RunningPlatform, startPlatform } from '../support/platform';

const PER_CALL = 2500n;

function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** The two points the upstream's tool waits at, released by the test. */
let gates = { afterFirst: deferred(), afterSecond: deferred() };

/**
 * What the agent's client talks to: a proxy that forwards to an edge the test picks, can cut the
 * answer streams in flight (as a network or load balancer would) and holds a resumption (a GET with
 * Last-Event-ID) until the test lets it through, to the edge then picked.
 */
interface SwitchingProxy {
  url: string;
  target: string;
  resumes: { lastEventId: string; target: string }[];
  resumeArrived: Promise<string>;
  releaseResume(): void;
  cutAnswerStreams(): void;
  close(): Promise<void>;
}

async function startSwitchingProxy(target: string): Promise<SwitchingProxy> {
  const inFlight = new Set<{ res: http.ServerResponse; up: http.ClientRequest }>();
  let arrived = deferred<string>();
  let release = deferred();
  const proxy: SwitchingProxy = {
    url: '',
    target,
    resumes: [],
    get resumeArrived() {
      return arrived.promise;
    },
    releaseResume: () => release.resolve(),
    cutAnswerStreams: () => {
      for (const f of inFlight) {
        f.up.destroy();
        f.res.destroy();
      }
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
  const server = http.createServer(async (req, res) => {
    const lastEventId = req.headers['last-event-id'];
    if (req.method === 'GET' && typeof lastEventId === 'string') {
      arrived.resolve(lastEventId);
      await release.promise;
      proxy.resumes.push({ lastEventId, target: proxy.target });
      arrived = deferred<string>();
      release = deferred();
    }
    const url = new URL(req.url ?? '/', proxy.target);
    const up = http.request(url, { method: req.method, headers: { ...req.headers, host: url.host }, agent: false });
    const flight = { res, up };
    up.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      if (req.method === 'POST' && String(answer.headers['content-type']).includes('text/event-stream'))
        inFlight.add(flight);
    });
    up.on('error', () => res.destroy());
    res.on('close', () => {
      inFlight.delete(flight);
      up.destroy();
    });
    req.pipe(up);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}

/**
 * Resumable answer streams (2025-11-25 Streamable HTTP, SEP-1699): a streamed tool call's answer
 * starts with a priming event and `retry`, its events are kept in Redis, and a client whose
 * connection broke resumes with Last-Event-ID on the same edge or another one, getting the rest of
 * the events and the result once; the call itself runs on and is billed once.
 */
describe.each(TEST_REDIS_MODES)('Resumable answer streams through the edge, on %s Redis', (mode) => {
  let p: RunningPlatform;
  let db: PrismaClient;
  let fixture: FixtureServer;
  let secondEdge: INestApplication;
  let secondEdgeUrl: string;
  let orgId: string;
  let newKey: GovernedUpstream['newKey'];
  const closers: (() => Promise<unknown>)[] = [];

  async function agentThrough(url: string, key: string): Promise<Client> {
    const agent = await connectAgent(url, key, 'resuming-agent');
    closers.push(() => agent.close());
    return agent;
  }

  /** Waits (blocking on the Redis stream, no polling) until the answer stream holds progress `n`. */
  async function storedProgress(lastEventId: string, n: number): Promise<void> {
    const [streamId, after] = lastEventId.split(':');
    const key = orgKeyOf(p.env.redisPrefix, orgId, 'sse', streamId);
    const blocking = testRedisClient(p.env.redis);
    try {
      let last = after;
      for (;;) {
        const read = (await blocking.xread('BLOCK', 20_000, 'STREAMS', key, last)) as
          [string, [string, string[]][]][] | null;
        if (!read) throw new Error(`progress ${n} never stored`);
        for (const [id, fields] of read[0][1]) {
          last = id;
          if (fields[fields.indexOf('m') + 1].includes(`"progress":${n}`)) return;
        }
      }
    } finally {
      blocking.disconnect();
    }
  }

  beforeAll(async () => {
    p = await startPlatform({ SSE_RETRY_MS: '100' }, { redis: mode });
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: p.env.vars.DATABASE_URL }) });
    fixture = await startFixtureServer(
      [
        {
          definition: {
            name: 'three_steps',
            description: 'Reports three steps of progress, waiting between them, then answers.',
            inputSchema: { type: 'object', properties: {} },
          },
          run: async (_args, extra) => {
            const progressToken = extra!._meta!.progressToken!;
            const step = (progress: number) =>
              extra!.sendNotification({
                method: 'notifications/progress',
                params: { progressToken, progress, total: 3 },
              });
            await step(1);
            await gates.afterFirst.promise;
            await step(2);
            await gates.afterSecond.promise;
            await step(3);
            return { content: [{ type: 'text', text: 'all three steps done' }] };
          },
        },
      ],
      { enableJsonResponse: false },
    );
    ({ orgId, newKey } = await governUpstream(p, {
      org: { name: 'Resume', slug: 'resume' },
      upstream: { namespace: 'steps', url: fixture.url, callTimeoutMs: 30_000 },
      price: { perCallMicros: PER_CALL },
    }));
    ({ app: secondEdge, url: secondEdgeUrl } = await startAnotherEdge(p, { SSE_RETRY_MS: '100' }));
  }, 120_000);

  afterAll(async () => {
    gates.afterFirst.resolve();
    gates.afterSecond.resolve();
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await secondEdge?.close();
    await db?.$disconnect();
    await p?.close();
    await fixture?.close();
  });

  for (const resumeOn of ['the same edge', 'another edge'] as const) {
    it(`should deliver the rest of a cut answer stream and its result once, billed once, when the client resumes on ${resumeOn}`, async () => {
      gates = { afterFirst: deferred(), afterSecond: deferred() };
      const { key, keyId } = await newKey(`resume ${resumeOn}`);
      const proxy = await startSwitchingProxy(p.edgeUrl);
      closers.push(() => proxy.close());
      const agent = await agentThrough(proxy.url, key);

      const progress: number[] = [];
      const firstStep = deferred();
      const secondStep = deferred();
      const answer = agent.callTool({ name: 'steps__three_steps', arguments: {} }, undefined, {
        timeout: 60_000,
        onprogress: (p) => {
          progress.push(p.progress);
          if (p.progress === 1) firstStep.resolve();
          if (p.progress === 2) secondStep.resolve();
        },
      });

      await firstStep.promise;
      const resumeTo = resumeOn === 'the same edge' ? p.edgeUrl : secondEdgeUrl;
      proxy.target = resumeTo;
      proxy.cutAnswerStreams();
      // The client comes back with the last event it got; meanwhile the call runs on and stores step 2.
      const lastEventId = await proxy.resumeArrived;
      gates.afterFirst.resolve();
      await storedProgress(lastEventId, 2);
      proxy.releaseResume();
      // Step 2 was replayed from Redis; step 3 and the result are stored after the resume began.
      await secondStep.promise;
      gates.afterSecond.resolve();
      const result = (await answer) as Parameters<typeof textOf>[0];

      expect(textOf(result)).toBe('all three steps done');
      expect(progress).toEqual([1, 2, 3]);
      expect(proxy.resumes).toEqual([{ lastEventId, target: resumeTo }]);
      const callId = callMeta(result)!.callId;
      await waitForUsageEvents(p.env.redis, p.env.redisPrefix, [callId]);
      const rows = await db.usageEvent.findMany({ where: { keyId } });
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ id: callId, outcome: 'OK', costMicros: PER_CALL });
    }, 90_000);
  }

  it('should refuse to resume another key’s answer stream or an unknown event id', async () => {
    gates = { afterFirst: deferred(), afterSecond: deferred() };
    gates.afterFirst.resolve();
    gates.afterSecond.resolve();
    const owner = await newKey('owner');
    const other = await newKey('other');
    const agent = await agentThrough(p.edgeUrl, owner.key);
    const seen: string[] = [];
    // The owner's stream, as its events were stored: the first is the priming event.
    const result = await agent.callTool({ name: 'steps__three_steps', arguments: {} }, undefined, {
      onprogress: () => undefined,
      resumptionToken: undefined,
      onresumptiontoken: (token) => seen.push(token),
    });
    expect(textOf(result as Parameters<typeof textOf>[0])).toBe('all three steps done');
    expect(seen.length).toBeGreaterThanOrEqual(5);
    const resume = (key: string, lastEventId: string) =>
      fetch(`${secondEdgeUrl}/mcp`, {
        headers: { Authorization: `Bearer ${key}`, Accept: 'text/event-stream', 'Last-Event-ID': lastEventId },
      });
    const refused = await resume(other.key, seen[0]);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/cannot be resumed/);
    expect((await resume(owner.key, `${seen[0].split(':')[0]}:1-0x`)).status).toBe(400);
    // The owner may: it gets what followed the priming event, ending with the result.
    const replay = await resume(owner.key, seen[0]);
    expect(replay.status).toBe(200);
    const text = await replay.text();
    expect(text.match(/"progress":\d/g)).toEqual(['"progress":1', '"progress":2', '"progress":3']);
    expect(text).toContain('all three steps done');
  }, 60_000);
});
