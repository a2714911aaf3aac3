/* eslint-disable @typescript-eslint/no-require-imports -- the SDK loads only when telemetry is on */
import { ProxyTracerProvider, diag, propagation, trace } from '@opentelemetry/api';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import type { MetricReader } from '@opentelemetry/sdk-metrics';
import type { NodeSDK } from '@opentelemetry/sdk-node';
import type { HeadSampling } from './head-sampling';

let sdk: NodeSDK | null = null;
let head: HeadSampling | undefined;
/** The global propagators' fields, and whether they are the W3C ones only: read once per SDK start. */
let fields: { all: readonly string[]; w3cOnly: boolean } | undefined;
/** The fields of the W3C propagators (tracecontext, baggage): the SDK's default ones. */
const W3C_FIELDS = new Set(['traceparent', 'tracestate', 'baggage']);

/**
 * OpenTelemetry is on when an OTLP endpoint is configured (`OTEL_EXPORTER_OTLP_ENDPOINT`, or the
 * traces or metrics one) and `OTEL_SDK_DISABLED` is not `true`. Off, nothing is loaded or patched
 * and the API calls in the code are no-ops.
 */
export function telemetryEnabled(env: NodeJS.ProcessEnv): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').toLowerCase() === 'true') return false;
  return Boolean(
    env.OTEL_EXPORTER_OTLP_ENDPOINT ||
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ||
    env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT,
  );
}

/**
 * Starts the OpenTelemetry Node SDK for `serviceName` (unless `OTEL_SERVICE_NAME` names it),
 * configured by the standard `OTEL_*` variables (exporters, protocol, sampler, resource
 * attributes), with the instrumentations for http, undici, pg, ioredis and Prisma. Call it before
 * the app's modules load (each app's `telemetry.ts`, imported first by its `main.ts`).
 * `ownServerSpans`: the app opens its incoming requests' spans itself (inHttpServerSpan).
 */
export function startTelemetry(
  serviceName: string,
  env: NodeJS.ProcessEnv,
  opts: { ownServerSpans?: boolean } = {},
): void {
  if (sdk || !telemetryEnabled(env)) return;
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { HttpInstrumentation } =
    require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { UndiciInstrumentation } =
    require('@opentelemetry/instrumentation-undici') as typeof import('@opentelemetry/instrumentation-undici');
  const { PgInstrumentation } =
    require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { IORedisInstrumentation } =
    require('@opentelemetry/instrumentation-ioredis') as typeof import('@opentelemetry/instrumentation-ioredis');
  const { PrismaInstrumentation } = require('@prisma/instrumentation') as typeof import('@prisma/instrumentation');
  const { RequestScopeContextManager } =
    require('./request-scope-context-manager') as typeof import('./request-scope-context-manager');
  const { HeadSampling, samplerFromEnv } = require('./head-sampling') as typeof import('./head-sampling');
  // The SDK's sampler, shared with inHttpServerSpan (HeadSampling); a sampler name this does not
  // build is left to the SDK.
  const sampler = samplerFromEnv(env);
  const sampling = sampler ? new HeadSampling(sampler) : undefined;
  sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME ?? serviceName,
    sampler,
    idGenerator: sampling?.idGenerator,
    // The active context lives beside the log context, in one AsyncLocalStorage (see the class).
    contextManager: new RequestScopeContextManager(),
    metricReaders: metricReadersFromEnv(env, serviceName),
    instrumentations: instrumentationsFromEnv<Instrumentation>(env, {
      http: () =>
        new HttpInstrumentation({
          // Probes and scrapes are not traffic.
          ignoreIncomingRequestHook: (req) => /^\/(healthz|readyz|metrics)\b/.test(req.url ?? ''),
          // An app that makes its own server spans (the edge, see inHttpServerSpan) skips the
          // instrumentation's per-request work, which runs whether the request is sampled or not.
          disableIncomingRequestInstrumentation: opts.ownServerSpans === true,
        }),
      // A request that carries its trace context already (the edge's MCP client span wrote it, in
      // the headers and params._meta alike) is that span's: a second, HTTP span would double what
      // each upstream call costs to trace and export.
      undici: () => new UndiciInstrumentation({ ignoreRequestHook: carriesTraceContext }),
      // Commands outside any span are background polling (the usage outbox's blocking reads, BullMQ's
      // own): recorded, each would be a trace of its own every second or so.
      pg: () => new PgInstrumentation({ requireParentSpan: true }),
      ioredis: () => new IORedisInstrumentation({ requireParentSpan: true }),
      prisma: () => new PrismaInstrumentation(),
    }),
  });
  sdk.start();
  // Only where the SDK made a tracer provider (OTEL_TRACES_EXPORTER can leave it without one, and
  // the request's span is then not even a dropped one: no trace context is made or handed on).
  const { TracerProvider } = require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
  const provider = trace.getTracerProvider();
  const tracing =
    (provider instanceof ProxyTracerProvider ? provider.getDelegate() : provider) instanceof TracerProvider;
  head = tracing ? sampling : undefined;
  fields = undefined; // the SDK set its propagators: read them again when next asked
}

/**
 * The instrumentations `OTEL_NODE_ENABLED_INSTRUMENTATIONS` and `OTEL_NODE_DISABLED_INSTRUMENTATIONS`
 * leave on (comma-separated names, as @opentelemetry/auto-instrumentations-node reads them: `http`,
 * `undici`, `pg`, `ioredis`, `prisma`); all by default.
 */
export function instrumentationsFromEnv<I>(env: NodeJS.ProcessEnv, all: Record<string, () => I>): I[] {
  const names = (v: string | undefined) =>
    v === undefined || v.trim() === ''
      ? undefined
      : new Set(
          v
            .split(',')
            .map((n) => n.trim())
            .filter(Boolean),
        );
  const enabled = names(env.OTEL_NODE_ENABLED_INSTRUMENTATIONS);
  const disabled = names(env.OTEL_NODE_DISABLED_INSTRUMENTATIONS);
  for (const n of [...(enabled ?? []), ...(disabled ?? [])])
    if (!(n in all)) diag.warn(`Unknown instrumentation "${n}" (${Object.keys(all).join(', ')})`);
  return Object.entries(all)
    .filter(([n]) => (enabled?.has(n) ?? true) && !disabled?.has(n))
    .map(([, make]) => make());
}

/**
 * The metric readers the SDK would build from `OTEL_METRICS_EXPORTER` (otlp by default, console,
 * prometheus, none), `OTEL_EXPORTER_OTLP_METRICS_PROTOCOL` / `OTEL_EXPORTER_OTLP_PROTOCOL` and
 * `OTEL_METRIC_EXPORT_INTERVAL` / `_TIMEOUT` (each exporter reads its own endpoint, headers and
 * temporality preference), built
 * here because they also export the PromOtelHistograms (otelHistogramsProducer): the SDK's own
 * readers take no producer.
 */
function metricReadersFromEnv(env: NodeJS.ProcessEnv, scopeName: string): MetricReader[] {
  const { PeriodicExportingMetricReader, ConsoleMetricExporter, InstrumentType } =
    require('@opentelemetry/sdk-metrics') as typeof import('@opentelemetry/sdk-metrics');
  const { otelHistogramsProducer } = require('./prom-otel-histogram') as typeof import('./prom-otel-histogram');
  const exporters = new Set((env.OTEL_METRICS_EXPORTER || 'otlp').split(',').map((e) => e.trim()));
  if (exporters.has('none')) return [];
  const positive = (v: string | undefined) => (Number(v) > 0 ? Number(v) : undefined);
  const exportIntervalMillis = positive(env.OTEL_METRIC_EXPORT_INTERVAL) ?? 60_000;
  const exportTimeoutMillis = Math.min(positive(env.OTEL_METRIC_EXPORT_TIMEOUT) ?? 30_000, exportIntervalMillis);
  // Each reader's producer exports the histograms with the temporality its exporter asks for
  // histograms (an OTLP exporter's follows OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE).
  const periodic = (exporter: import('@opentelemetry/sdk-metrics').PushMetricExporter) =>
    new PeriodicExportingMetricReader({
      exporter,
      exportIntervalMillis,
      exportTimeoutMillis,
      metricProducers: [
        otelHistogramsProducer(scopeName, undefined, exporter.selectAggregationTemporality?.(InstrumentType.HISTOGRAM)),
      ],
    });
  const readers: MetricReader[] = [];
  for (const name of exporters) {
    if (name === 'otlp') readers.push(periodic(otlpMetricExporter(env)));
    else if (name === 'console') readers.push(periodic(new ConsoleMetricExporter()));
    else if (name === 'prometheus') {
      const { PrometheusExporter } =
        require('@opentelemetry/exporter-prometheus') as typeof import('@opentelemetry/exporter-prometheus');
      const port = positive(env.OTEL_EXPORTER_PROMETHEUS_PORT);
      readers.push(
        new PrometheusExporter({
          host: env.OTEL_EXPORTER_PROMETHEUS_HOST,
          port,
          metricProducers: [otelHistogramsProducer(scopeName)],
        }),
      );
    } else diag.warn(`Unsupported OTEL_METRICS_EXPORTER value: "${name}" (otlp, console, prometheus or none)`);
  }
  return readers;
}

function otlpMetricExporter(env: NodeJS.ProcessEnv): import('@opentelemetry/sdk-metrics').PushMetricExporter {
  const protocol = (env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? '').trim();
  if (protocol === 'grpc') {
    const { OTLPMetricExporter } =
      require('@opentelemetry/exporter-metrics-otlp-grpc') as typeof import('@opentelemetry/exporter-metrics-otlp-grpc');
    return new OTLPMetricExporter();
  }
  if (protocol === 'http/json') {
    const { OTLPMetricExporter } =
      require('@opentelemetry/exporter-metrics-otlp-http') as typeof import('@opentelemetry/exporter-metrics-otlp-http');
    return new OTLPMetricExporter();
  }
  const { OTLPMetricExporter } =
    require('@opentelemetry/exporter-metrics-otlp-proto') as typeof import('@opentelemetry/exporter-metrics-otlp-proto');
  return new OTLPMetricExporter();
}

/** Whether an undici request's headers (a string, or name and value pairs) hold a `traceparent`. */
function carriesTraceContext(request: { headers: string | (string | string[])[] }): boolean {
  const { headers } = request;
  if (typeof headers === 'string') return /(^|\r\n)traceparent:/i.test(headers);
  // The name's length first: a lowercased copy of every header name was an allocation each.
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i];
    if (name.length === 11 && String(name).toLowerCase() === 'traceparent') return true;
  }
  return false;
}

/**
 * True once startTelemetry started the SDK in this process. Off, the per-call tracing and OTel
 * metric calls are skipped outright (the no-op API would still cost their attribute objects and
 * context look-ups on every call).
 */
export function telemetryRunning(): boolean {
  return sdk !== null;
}

/** The sampler's decision before a root span is made, while telemetry runs (see HeadSampling). */
export function headSampling(): HeadSampling | undefined {
  return sdk ? head : undefined;
}

/**
 * The header fields the global propagators (the SDK's, once it runs) read and write (`propagation.fields()`, read once
 * per start instead of once per request).
 */
export function propagatorFields(): readonly string[] {
  return globalFields().all;
}

/** Whether the global propagators are the W3C ones only (traceparent, tracestate, baggage). */
export function w3cPropagationOnly(): boolean {
  return globalFields().w3cOnly;
}

function globalFields(): { all: readonly string[]; w3cOnly: boolean } {
  if (!fields) {
    const all = propagation.fields();
    fields = { all, w3cOnly: all.every((field) => W3C_FIELDS.has(field)) };
  }
  return fields;
}

/** Flushes what is buffered (spans, metrics) and stops exporting; at the end of the drain. */
export async function shutdownTelemetry(): Promise<void> {
  const running = sdk;
  sdk = null;
  fields = undefined;
  await running?.shutdown();
}
