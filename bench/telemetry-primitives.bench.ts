/**
 * `npm run bench:telemetry-primitives`: what two pieces of a call cost with telemetry on, each
 * against its baseline in the same run (CPU per operation, rounds alternated, the first two
 * dropped as warm-up), in one process with the OpenTelemetry SDK started as the edge starts it
 * (nothing is exported: the endpoint is never reached within the run).
 *
 * - A Redis command (`GET`, 50 in flight) made inside a sampled-out request: in the context it ran
 *   in before sampledOutContext (the dropped span active, so the ioredis instrumentation does a
 *   span's work) and in sampledOutContext, against no span at all.
 * - One record of an operation histogram: prom-client's Histogram alone (telemetry off, before
 *   PromOtelHistogram), prom-client's plus the OpenTelemetry SDK's (telemetry on, before), and
 *   PromOtelHistogram (both, after).
 *
 * Redis: BENCH_REDIS_URL, else redis://127.0.0.1:6379 (it reads one absent key).
 */
import { ROOT_CONTEXT, context, metrics, trace, type Context } from '@opentelemetry/api';
import { PromOtelHistogram, sampledOutContext, startTelemetry } from '@tollgate/observability';

process.env.OTEL_EXPORTER_OTLP_ENDPOINT ??= 'http://127.0.0.1:9';
process.env.OTEL_TRACES_SAMPLER = 'parentbased_traceidratio';
process.env.OTEL_TRACES_SAMPLER_ARG = '0';
process.env.OTEL_METRIC_EXPORT_INTERVAL = '600000';
startTelemetry('telemetry-primitives-bench', process.env, { ownServerSpans: true });

const ROUNDS = 8;
const BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30];

const cpuMicros = () => {
  const c = process.cpuUsage();
  return c.user + c.system;
};

async function compare(name: string, modes: Record<string, (n: number) => Promise<void> | void>, n: number) {
  const sums: Record<string, number> = {};
  for (let round = 0; round < ROUNDS; round++)
    for (const [label, run] of Object.entries(modes)) {
      const before = cpuMicros();
      await run(n);
      if (round >= 2) sums[label] = (sums[label] ?? 0) + (cpuMicros() - before) / n / (ROUNDS - 2);
    }
  const base = Object.values(sums)[0];
  console.log(`\n${name}: CPU per operation, ${ROUNDS - 2} rounds of ${n}`);
  for (const [label, us] of Object.entries(sums))
    console.log(`  ${label.padEnd(44)} ${us.toFixed(3)} µs  x${(us / base).toFixed(2)}`);
  return sums;
}

async function main(): Promise<void> {
  // Loaded after the SDK, as in the apps: the instrumentation patches it on load.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Redis } = require('ioredis') as typeof import('ioredis');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Histogram, Registry } = require('prom-client') as typeof import('prom-client');
  const redis = new Redis(process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379');
  await redis.ping();
  const dropped = trace.getTracer('bench').startSpan('POST /mcp', {}, ROOT_CONTEXT);
  const gets = (ctx: Context) => (n: number) =>
    context.with(ctx, async () => {
      for (let i = 0; i < n; i += 50)
        await Promise.all(Array.from({ length: 50 }, (_, j) => redis.get(`tollgate-bench-absent:${j}`)));
    });
  const redisFigures = await compare(
    'Redis GET in a sampled-out request',
    {
      'no span (telemetry off)': gets(ROOT_CONTEXT),
      'dropped span active (before)': gets(trace.setSpan(ROOT_CONTEXT, dropped)),
      'sampledOutContext (after)': gets(sampledOutContext(ROOT_CONTEXT, dropped.spanContext())),
    },
    20_000,
  );
  redis.disconnect();

  const registry = new Registry();
  const labelNames = ['mcp_method_name', 'gen_ai_tool_name', 'upstream', 'outcome'];
  const prom = new Histogram({ name: 'prom_seconds', help: 'h', labelNames, buckets: BUCKETS, registers: [registry] });
  const otel = metrics.getMeter('bench').createHistogram('mcp.server.operation.duration', {
    unit: 's',
    advice: { explicitBucketBoundaries: BUCKETS },
  });
  const once = new PromOtelHistogram({
    name: 'once_seconds',
    help: 'h',
    labelNames,
    otelName: 'bench.operation.duration',
    otelDescription: 'h',
    unit: 's',
    attributeNames: ['mcp.method.name', 'gen_ai.tool.name', 'tollgate.upstream', 'tollgate.outcome'],
    buckets: BUCKETS,
    registry,
  });
  const promRecord = (v: number) =>
    prom.observe(
      { mcp_method_name: 'tools/call', gen_ai_tool_name: 'fixture__ping', upstream: 'fixture', outcome: 'OK' },
      v,
    );
  const records = (record: (v: number) => void) => (n: number) => {
    for (let i = 0; i < n; i++) record((i % 97) / 1000);
  };
  const histogramFigures = await compare(
    'One operation histogram record',
    {
      'prom-client (telemetry off, before)': records(promRecord),
      'prom-client + OpenTelemetry SDK (on, before)': records((v) => {
        promRecord(v);
        otel.record(v, {
          'mcp.method.name': 'tools/call',
          'gen_ai.tool.name': 'fixture__ping',
          'tollgate.upstream': 'fixture',
          'tollgate.outcome': 'OK',
        });
      }),
      'PromOtelHistogram (off and on, after)': records((v) =>
        once.record(['tools/call', 'fixture__ping', 'fixture', 'OK'], v),
      ),
    },
    200_000,
  );
  console.log(
    JSON.stringify({
      bench: 'telemetry-primitives',
      redisGetMicros: redisFigures,
      histogramRecordMicros: histogramFigures,
    }),
  );
  process.exit(0);
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exit(1);
});
