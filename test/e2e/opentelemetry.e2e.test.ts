import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { QueueName } from '@tollgate/queue';
import {
  createTestEnv,
  REPO_ROOT,
  SERVER_EVERYTHING,
  TestEnv,
  waitForJobs,
  waitForUsageEvents,
} from '@tollgate/testing';
import { Client as PgClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer, FixtureTool, startFixtureServer } from '../fixtures/http-fixture-server';
import { startSseFixtureServer } from '../fixtures/sse-fixture-server';
import { AppProcess, startAppProcess, stopAppProcess } from '../support/edge-process';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: Record<string, unknown> }[];
  /** Added by the receiver: the resource's `service.name`. */
  service: string;
}

/** OTLP span kinds (the protobuf enum, one above the API's). */
const KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 };

/** A small OTLP/HTTP (JSON) receiver: what the apps export, as a collector would get it. */
async function startOtlpReceiver() {
  const spans: OtlpSpan[] = [];
  const metricNames = new Set<string>();
  // The latest histogram points of each metric of the edge (cumulative: each export has them all).
  const histograms = new Map<string, OtlpHistogramPoint[]>();
  // Every histogram export of every service, in the order received.
  const histogramExports: OtlpHistogramExport[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const json = JSON.parse(body || '{}');
      if (req.url === '/v1/traces')
        for (const rs of json.resourceSpans ?? []) {
          const service = serviceOf(rs.resource);
          for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) spans.push({ ...s, service });
        }
      if (req.url === '/v1/metrics')
        for (const rm of json.resourceMetrics ?? []) {
          const service = serviceOf(rm.resource);
          for (const sm of rm.scopeMetrics ?? [])
            for (const m of sm.metrics ?? []) {
              metricNames.add(m.name);
              if (!m.histogram) continue;
              const points = m.histogram.dataPoints.map(histogramPoint);
              if (service === 'tollgate-edge') histograms.set(m.name, points);
              histogramExports.push({
                service,
                name: m.name,
                temporality: m.histogram.aggregationTemporality,
                points,
              });
            }
        }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    spans,
    metricNames,
    histograms,
    histogramExports,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A resource's `service.name`. */
function serviceOf(resource: { attributes?: { key: string; value: Record<string, unknown> }[] } | undefined): string {
  return String(Object.values(resource?.attributes?.find((a) => a.key === 'service.name')?.value ?? {})[0]);
}

interface OtlpHistogramPoint {
  attributes: Record<string, unknown>;
  count: number;
  explicitBounds: number[];
  startTimeUnixNano: string;
  timeUnixNano: string;
}

/** One histogram of one export: OTLP's AggregationTemporality, 1 delta, 2 cumulative. */
interface OtlpHistogramExport {
  service: string;
  name: string;
  temporality: number;
  points: OtlpHistogramPoint[];
}

function histogramPoint(p: {
  attributes?: { key: string; value: Record<string, unknown> }[];
  count: string | number;
  explicitBounds?: number[];
  startTimeUnixNano: string | number;
  timeUnixNano: string | number;
}): OtlpHistogramPoint {
  return {
    attributes: Object.fromEntries((p.attributes ?? []).map((a) => [a.key, Object.values(a.value)[0]])),
    count: Number(p.count),
    explicitBounds: p.explicitBounds ?? [],
    startTimeUnixNano: String(p.startTimeUnixNano),
    timeUnixNano: String(p.timeUnixNano),
  };
}

const attr = (span: OtlpSpan, key: string) => {
  const v = span.attributes?.find((a) => a.key === key)?.value;
  return v ? Object.values(v)[0] : undefined;
};

/** A tool of the SSE upstream that answers with the `_meta` its request came with. */
const META_ECHO: FixtureTool = {
  definition: { name: 'meta', description: 'Answers with the _meta it received.', inputSchema: { type: 'object' } },
  run: (_args, extra) => ({ content: [{ type: 'text', text: JSON.stringify(extra?._meta ?? {}) }] }),
};

/**
 * OpenTelemetry end to end: the three apps, each in its own process with OTEL_* variables set,
 * export real OTLP to a receiver in the test. One call's trace goes from the agent's traceparent
 * through the edge's spans to the upstream (HTTP headers and params._meta; params._meta on stdio and
 * SSE upstreams) and on to the worker's ledger write, and the ledger row keeps the trace id; an
 * admin request's trace continues into the worker's BullMQ job.
 */
describe('OpenTelemetry: traces and metrics over OTLP (edge, admin API and worker in their own processes)', () => {
  let env: TestEnv;
  let fixture: FixtureServer;
  let sse: Awaited<ReturnType<typeof startSseFixtureServer>>;
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let admin: AppProcess;
  let worker: AppProcess;
  let edge: AppProcess;
  let db: PgClient;
  let keySecret: string;
  let orgId: string;
  let fixtureUpstreamId: string;
  const tapDir = mkdtempSync(path.join(tmpdir(), 'tollgate-otel-'));

  async function adminCall(method: string, urlPath: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`http://127.0.0.1:${admin.port}${urlPath}`, {
      method,
      headers: {
        Authorization: `Bearer ${env.adminToken}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  async function addUpstream(spec: Record<string, unknown>): Promise<string> {
    const created = await adminCall('POST', `/v1/orgs/${orgId}/upstreams`, spec);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const sync = await adminCall('POST', `/v1/orgs/${orgId}/upstreams/${created.body.id}/sync`);
    await waitForJobs(env.redisUrl, env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    return created.body.id;
  }

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    env = await createTestEnv();
    const otel = {
      ...env.vars,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_METRIC_EXPORT_INTERVAL: '500',
    };
    [admin, worker] = await Promise.all([startAppProcess('admin', otel), startAppProcess('worker', otel)]);
    db = new PgClient({ connectionString: env.vars.DATABASE_URL });
    await db.connect();
    fixture = await startFixtureServer();
    sse = await startSseFixtureServer([META_ECHO]);

    orgId = (await adminCall('POST', '/v1/orgs', { name: 'Acme', slug: 'acme' })).body.id;
    const teamId = (await adminCall('POST', `/v1/orgs/${orgId}/teams`, { name: 't' })).body.id;
    const userId = (await adminCall('POST', `/v1/orgs/${orgId}/users`, { email: 'u@acme.test' })).body.id;
    await adminCall('POST', `/v1/orgs/${orgId}/teams/${teamId}/members`, { userId });
    keySecret = (await adminCall('POST', `/v1/orgs/${orgId}/keys`, { teamId, userId, name: 'agent' })).body.secret;
    fixtureUpstreamId = await addUpstream({ namespace: 'fixture', transport: 'STREAMABLE_HTTP', url: fixture.url });
    await addUpstream({ namespace: 'sse', transport: 'SSE', url: sse.url });
    await addUpstream({
      namespace: 'local',
      transport: 'STDIO',
      command: process.execPath,
      args: [
        path.join(REPO_ROOT, 'test/fixtures/stdio-tap.mjs'),
        path.join(tapDir, 'stdio'),
        SERVER_EVERYTHING.command,
        ...SERVER_EVERYTHING.args,
      ],
    });
    await adminCall('PUT', `/v1/orgs/${orgId}/policies/ORG/${orgId}`, {
      allow: ['fixture:*', 'sse:meta', 'local:echo'],
      deny: [],
    });
    await adminCall('POST', `/v1/orgs/${orgId}/prices`, { toolPattern: '*', perCallMicros: 700 });
    edge = await startAppProcess('edge', otel);
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled([stopAppProcess(edge), stopAppProcess(admin), stopAppProcess(worker)]);
    await db?.end();
    await fixture?.close();
    await sse?.close();
    await env?.cleanup();
    await receiver?.close();
    rmSync(tapDir, { recursive: true, force: true });
  });

  const call = (
    id: number,
    tool: string,
    headers: Record<string, string>,
    meta?: Record<string, string>,
    port = edge.port,
  ) =>
    fetch(`http://127.0.0.1:${port}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${keySecret}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: {
          name: tool,
          arguments: tool === 'local__echo' ? { message: 'hi' } : {},
          ...(meta ? { _meta: meta } : {}),
        },
      }),
    });

  const spansOf = (traceId: string) => receiver.spans.filter((s) => s.traceId === traceId);
  const newTrace = () => ({ traceId: randomBytes(16).toString('hex'), parent: randomBytes(8).toString('hex') });

  it("should continue the agent's trace through the edge and the upstream to the worker's ledger write, and keep the trace id on the ledger row", async () => {
    const { traceId, parent } = newTrace();
    const res = await call(7, 'fixture__ping', {
      traceparent: `00-${traceId}-${parent}-01`,
      tracestate: 'agent=1',
      baggage: 'team=blue',
      'x-request-id': 'otel-request-1',
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { result: { _meta: Record<string, any> } };
    const callId = body.result._meta['tollgate/call'].callId as string;

    // The upstream got the trace (a span of the edge as parent), its state, the baggage and the request id.
    const seen = fixture.calls.at(-1)!;
    expect(seen.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    expect(seen.headers.traceparent).not.toContain(parent);
    expect(seen.headers.tracestate).toBe('agent=1');
    expect(seen.headers.baggage).toBe('team=blue');
    expect(seen.headers['x-request-id']).toBe('otel-request-1');
    // In params._meta too: the upstream client span's context, the HTTP request's parent.
    const metaParent = String(seen.meta?.traceparent).split('-');
    expect(metaParent[1]).toBe(traceId);

    await expect
      .poll(() => spansOf(traceId).map((s) => `${s.service} ${s.name}`), { timeout: 20_000 })
      .toEqual(
        expect.arrayContaining([
          'tollgate-edge tools/call fixture__ping',
          'tollgate-edge tools/call ping',
          'tollgate-edge tollgate.policy',
          'tollgate-edge tollgate.pricing',
          'tollgate-edge tollgate.admission',
          'tollgate-edge tollgate.completion',
          'tollgate-worker process usage-outbox',
        ]),
      );
    const spans = spansOf(traceId);
    const server = spans.find((s) => s.name === 'tools/call fixture__ping')!;
    expect(server.kind).toBe(KIND.SERVER);
    expect(attr(server, 'mcp.method.name')).toBe('tools/call');
    expect(attr(server, 'gen_ai.tool.name')).toBe('fixture__ping');
    expect(attr(server, 'jsonrpc.request.id')).toBe('7');
    expect(attr(server, 'tollgate.call.id')).toBe(callId);
    expect(Number(attr(server, 'tollgate.cost.micros'))).toBe(700);
    expect(attr(server, 'tollgate.org.id')).toBe(orgId);
    // Under the HTTP request's server span, itself the agent's span's child.
    const http = spans.find((s) => s.spanId === server.parentSpanId)!;
    expect(`${http.service} ${http.kind} ${http.name}`).toBe(`tollgate-edge ${KIND.SERVER} POST /mcp`);
    expect(http.parentSpanId).toBe(parent);
    expect(Number(attr(http, 'http.response.status_code'))).toBe(200);
    const client = spans.find((s) => s.name === 'tools/call ping')!;
    expect(client.kind).toBe(KIND.CLIENT);
    expect(client.parentSpanId).toBe(server.spanId);
    expect(metaParent[2]).toBe(client.spanId);
    // The upstream's parent is the client span, in the headers as in _meta: the HTTP request makes
    // no span of its own, nor do the admission and completion scripts' Redis commands.
    expect(String(seen.headers.traceparent).split('-')[2]).toBe(client.spanId);
    const scripts = spans.filter((s) => s.name === 'tollgate.admission' || s.name === 'tollgate.completion');
    expect(scripts).toHaveLength(2);
    expect(spans.filter((s) => scripts.some((p) => p.spanId === s.parentSpanId)).map((s) => s.name)).toEqual([]);

    // The worker's ledger write of this call is in the same trace, under the call's span.
    const ledgerWrite = spans.find((s) => s.name === 'process usage-outbox')!;
    expect(ledgerWrite.kind).toBe(KIND.CONSUMER);
    expect(attr(ledgerWrite, 'tollgate.call.id')).toBe(callId);
    expect(spans.find((s) => s.spanId === ledgerWrite.parentSpanId)?.name).toBe('tools/call fixture__ping');
    // The batch's span (with its Postgres INSERT) links to it.
    const batch = receiver.spans.find(
      (s) => s.name === 'usage-ledger write' && JSON.stringify(s).includes(ledgerWrite.spanId),
    );
    expect(batch?.service).toBe('tollgate-worker');

    // The ledger row keeps the trace id.
    await waitForUsageEvents(env.redisUrl, env.redisPrefix, [callId]);
    const row = await db.query('SELECT "traceId" FROM "UsageEvent" WHERE "id" = $1', [callId]);
    expect(row.rows).toEqual([{ traceId }]);
    // And the per-call log shows it.
    const day = new Date().toISOString().slice(0, 10);
    const log = await adminCall('GET', `/v1/orgs/${orgId}/calls?from=${day}&to=${day}`);
    expect(log.status, JSON.stringify(log.body)).toBe(200);
    expect(log.body.rows.find((r: { id: string }) => r.id === callId)).toMatchObject({ traceId, costMicros: 700 });
    // No secret in any attribute.
    expect(JSON.stringify(receiver.spans)).not.toContain(keySecret);
  });

  it('should take the trace context from params._meta when the agent puts it there', async () => {
    const { traceId, parent } = newTrace();
    const res = await call(8, 'fixture__ping', {}, { traceparent: `00-${traceId}-${parent}-01` });
    expect(res.status).toBe(200);
    expect(fixture.calls.at(-1)!.headers.traceparent).toContain(traceId);
    await expect
      .poll(() => spansOf(traceId).some((s) => s.name === 'tools/call fixture__ping'), { timeout: 20_000 })
      .toBe(true);
  });

  it("should pass an agent's unsampled trace on to the upstream and the ledger without recording a span of it", async () => {
    const quiet = newTrace();
    const res = await call(10, 'fixture__ping', { traceparent: `00-${quiet.traceId}-${quiet.parent}-00` });
    expect(res.status).toBe(200);
    const callId = ((await res.json()) as { result: { _meta: Record<string, any> } }).result._meta['tollgate/call']
      .callId as string;
    const seen = fixture.calls.at(-1)!;
    expect(seen.headers.traceparent).toMatch(new RegExp(`^00-${quiet.traceId}-[0-9a-f]{16}-00$`));
    expect(String(seen.meta?.traceparent)).toBe(seen.headers.traceparent);
    // A sampled call after it: once its spans have arrived, the edge has exported the first call's too.
    const next = newTrace();
    expect((await call(11, 'fixture__ping', { traceparent: `00-${next.traceId}-${next.parent}-01` })).status).toBe(200);
    await expect
      .poll(() => spansOf(next.traceId).some((s) => s.name === 'tollgate.completion'), { timeout: 20_000 })
      .toBe(true);
    expect(spansOf(quiet.traceId).map((s) => `${s.service} ${s.name}`)).toEqual([]);
    await waitForUsageEvents(env.redisUrl, env.redisPrefix, [callId]);
    const row = await db.query('SELECT "traceId" FROM "UsageEvent" WHERE "id" = $1', [callId]);
    expect(row.rows).toEqual([{ traceId: quiet.traceId }]);
  });

  it('should start a trace of its own for a call that comes with none, recorded when the sampler keeps it', async () => {
    // The edge's sampler (parentbased_always_on by default) keeps every root span.
    const res = await call(12, 'fixture__ping', {});
    expect(res.status).toBe(200);
    const callId = ((await res.json()) as { result: { _meta: Record<string, any> } }).result._meta['tollgate/call']
      .callId as string;
    const seen = fixture.calls.at(-1)!;
    expect(seen.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const traceId = String(seen.headers.traceparent).split('-')[1];
    await expect
      .poll(() => spansOf(traceId).map((s) => s.name), { timeout: 20_000 })
      .toEqual(expect.arrayContaining(['POST /mcp', 'tools/call fixture__ping', 'tools/call ping']));
    const root = spansOf(traceId).find((s) => s.name === 'POST /mcp')!;
    expect(root.parentSpanId ?? '').toBe('');
    await waitForUsageEvents(env.redisUrl, env.redisPrefix, [callId]);
    const row = await db.query('SELECT "traceId" FROM "UsageEvent" WHERE "id" = $1', [callId]);
    expect(row.rows).toEqual([{ traceId }]);
  });

  it('should hand a trace id of its own to the upstream and the ledger, not sampled and with no span, for a call the sampler drops', async () => {
    const service = 'tollgate-edge-unsampled';
    const quiet = await startAppProcess('edge', {
      ...env.vars,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_SERVICE_NAME: service,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0',
    });
    try {
      const res = await call(13, 'fixture__ping', { 'x-request-id': 'otel-unsampled-1' }, undefined, quiet.port);
      expect(res.status).toBe(200);
      const callId = ((await res.json()) as { result: { _meta: Record<string, any> } }).result._meta['tollgate/call']
        .callId as string;
      const seen = fixture.calls.at(-1)!;
      expect(seen.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
      expect(seen.headers['x-request-id']).toBe('otel-unsampled-1');
      expect(seen.meta).toMatchObject({ traceparent: seen.headers.traceparent });
      const traceId = String(seen.headers.traceparent).split('-')[1];
      await waitForUsageEvents(env.redisUrl, env.redisPrefix, [callId]);
      const row = await db.query('SELECT "traceId" FROM "UsageEvent" WHERE "id" = $1', [callId]);
      expect(row.rows).toEqual([{ traceId }]);
      // An agent's sampled trace through the same edge: once its spans have arrived, so would have the first call's.
      const next = newTrace();
      const sampled = await call(
        14,
        'fixture__ping',
        { traceparent: `00-${next.traceId}-${next.parent}-01` },
        undefined,
        quiet.port,
      );
      expect(sampled.status).toBe(200);
      await expect
        .poll(() => spansOf(next.traceId).some((s) => s.service === service && s.name === 'tollgate.completion'), {
          timeout: 20_000,
        })
        .toBe(true);
      expect(spansOf(traceId).map((s) => `${s.service} ${s.name}`)).toEqual([]);
    } finally {
      await stopAppProcess(quiet);
    }
  });

  it('should send the trace context in params._meta to stdio and SSE upstreams, the edge client span as parent', async () => {
    // stdio: server-everything, what the edge wrote to its stdin read from the tap's log.
    const stdioTrace = newTrace();
    const stdioRes = await call(9, 'local__echo', { traceparent: `00-${stdioTrace.traceId}-${stdioTrace.parent}-01` });
    expect(stdioRes.status).toBe(200);
    expect(JSON.stringify(await stdioRes.json())).toContain('Echo: hi');
    const sent = readFileSync(path.join(tapDir, 'stdio.in'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { method?: string; params?: { name?: string; _meta?: Record<string, string> } })
      .filter((m) => m.method === 'tools/call' && m.params?.name === 'echo');
    const stdioMeta = String(sent.at(-1)?.params?._meta?.traceparent).split('-');
    expect(stdioMeta[1]).toBe(stdioTrace.traceId);

    // SSE: the fixture's tool answers with the _meta it received.
    const sseTrace = newTrace();
    const sseRes = await call(10, 'sse__meta', { traceparent: `00-${sseTrace.traceId}-${sseTrace.parent}-01` });
    const sseBody = (await sseRes.json()) as { result: { content: { text: string }[] } };
    const sseMeta = String(JSON.parse(sseBody.result.content[0].text).traceparent).split('-');
    expect(sseMeta[1]).toBe(sseTrace.traceId);

    // Each upstream's parent is the edge's upstream client span of that call.
    for (const [trace, meta, tool] of [
      [stdioTrace, stdioMeta, 'echo'],
      [sseTrace, sseMeta, 'meta'],
    ] as const) {
      await expect
        .poll(() => spansOf(trace.traceId).find((s) => s.name === `tools/call ${tool}`)?.spanId, { timeout: 20_000 })
        .toBe(meta[2]);
    }
  });

  it("should continue an admin request's trace into the worker's BullMQ job", async () => {
    const { traceId, parent } = newTrace();
    const sync = await adminCall('POST', `/v1/orgs/${orgId}/upstreams/${fixtureUpstreamId}/sync`, undefined, {
      traceparent: `00-${traceId}-${parent}-01`,
    });
    expect(sync.status).toBe(202);
    await waitForJobs(env.redisUrl, env.redisPrefix, QueueName.CatalogSync, [sync.body.jobId]);
    await expect
      .poll(() => spansOf(traceId).map((s) => `${s.service} ${s.kind} ${s.name}`), { timeout: 20_000 })
      .toEqual(
        expect.arrayContaining([
          `tollgate-admin-api ${KIND.PRODUCER} add catalog-sync.sync-upstream`,
          `tollgate-worker ${KIND.CONSUMER} process catalog-sync`,
        ]),
      );
    // The job's span is the admin's child, and the sync's own work (its queries, the upstream's requests) is under it.
    const spans = spansOf(traceId);
    const consumer = spans.find((s) => s.name === 'process catalog-sync')!;
    expect(spans.find((s) => s.spanId === consumer.parentSpanId)?.service).toBe('tollgate-admin-api');
    expect(spans.filter((s) => s.parentSpanId === consumer.spanId).length).toBeGreaterThan(0);
  });

  it('should export mcp.server.operation.duration and mcp.client.operation.duration over OTLP, by tool, upstream and outcome', async () => {
    // The tool is the agent's name for it on the server side, the upstream's own on the client side;
    // the outcome the ledger's on the server side (OK), the upstream call's on the client side (ok).
    const okPing = () => [
      receiver.histograms
        .get('mcp.server.operation.duration')
        ?.find(
          (p) => p.attributes['gen_ai.tool.name'] === 'fixture__ping' && p.attributes['tollgate.outcome'] === 'OK',
        ),
      receiver.histograms
        .get('mcp.client.operation.duration')
        ?.find((p) => p.attributes['gen_ai.tool.name'] === 'ping' && p.attributes['tollgate.outcome'] === 'ok'),
    ];
    await expect.poll(okPing, { timeout: 20_000 }).toEqual([expect.anything(), expect.anything()]);
    for (const point of okPing()) {
      expect(point!.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'tollgate.upstream': 'fixture' });
      expect(point!.count).toBeGreaterThan(0);
      expect(point!.explicitBounds).toEqual([0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30]);
    }
  });

  it('should export the operation histograms with delta temporality when OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE asks for it (delta, lowmemory)', async () => {
    // Both preferences at once, each its own edge process and service name (the exports are told
    // apart by it); an edge process's start is most of the test's time.
    await Promise.all(
      ['delta', 'lowmemory'].map(async (preference) => {
        const service = `tollgate-edge-${preference}`;
        const other = await startAppProcess('edge', {
          ...env.vars,
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_METRIC_EXPORT_INTERVAL: '300',
          OTEL_SERVICE_NAME: service,
          OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: preference,
        });
        try {
          const served = (at: number) =>
            receiver.histogramExports
              .slice(at)
              .filter((e) => e.service === service && e.name === 'mcp.server.operation.duration');
          const pings = (exports: OtlpHistogramExport[]) =>
            exports.flatMap((e) =>
              e.points.filter(
                (p) =>
                  p.attributes['gen_ai.tool.name'] === 'fixture__ping' && p.attributes['tollgate.outcome'] === 'OK',
              ),
            );
          const callsTo = (n: number) =>
            Promise.all(
              Array.from({ length: n }, async (_, i) => {
                const res = await call(i, 'fixture__ping', {}, undefined, other.port);
                expect(res.status).toBe(200);
                await res.text();
              }),
            );
          // Three calls, then two: each export counts only the calls since the one before, so the
          // points add up to the calls made, every one of them delta (1), back to back in time.
          await callsTo(3);
          await expect.poll(() => pings(served(0)).reduce((n, p) => n + p.count, 0), { timeout: 20_000 }).toBe(3);
          const mark = receiver.histogramExports.length;
          await callsTo(2);
          await expect.poll(() => pings(served(mark)).reduce((n, p) => n + p.count, 0), { timeout: 20_000 }).toBe(2);
          const exports = served(0);
          expect(new Set(exports.map((e) => e.temporality))).toEqual(new Set([1]));
          const points = pings(exports);
          expect(points.reduce((n, p) => n + p.count, 0)).toBe(5);
          for (const [i, p] of points.entries()) {
            expect(BigInt(p.startTimeUnixNano)).toBeLessThan(BigInt(p.timeUnixNano));
            if (i > 0) expect(BigInt(p.startTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(points[i - 1].timeUnixNano));
          }
        } finally {
          await stopAppProcess(other);
        }
      }),
    );
    // The edge left at its default exports cumulative points (2).
    const cumulative = receiver.histogramExports.filter((e) => e.service === 'tollgate-edge');
    expect(cumulative.length).toBeGreaterThan(0);
    expect(new Set(cumulative.map((e) => e.temporality))).toEqual(new Set([2]));
  });
});
