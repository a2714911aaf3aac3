import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type HistogramMetricData,
} from '@opentelemetry/sdk-metrics';
import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { PromOtelHistogram, otelHistogramsProducer } from './prom-otel-histogram';

const BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30];
const LABELS = ['mcp_method_name', 'gen_ai_tool_name', 'upstream', 'outcome'] as const;
const ATTRIBUTES = ['mcp.method.name', 'gen_ai.tool.name', 'tollgate.upstream', 'tollgate.outcome'];

/** Calls as the edge records them: label values, seconds, error type, exported over OTLP. */
const RECORDS: [string[], number, string | undefined, boolean][] = [
  [['tools/call', 'gh__search', 'gh', 'ok'], 0.0004, undefined, true],
  [['tools/call', 'gh__search', 'gh', 'ok'], 0.001, undefined, true], // on a bound: in its bucket
  [['tools/call', 'gh__search', 'gh', 'ok'], 0.0072, undefined, true],
  [['tools/call', 'gh__search', 'gh', 'ok'], 42, undefined, true], // above every bound
  [['tools/call', 'fs__read', 'fs "local"\\x', 'tool_error'], 0.3, undefined, true],
  [['tools/call', 'gh__search', 'gh', 'error'], 2, 'UPSTREAM_TIMEOUT', true],
  [['tools/call', 'gh__search', 'gh', 'error'], 0.02, 'UPSTREAM_UNAVAILABLE', true],
  [['tools/call', 'gh__search', '', 'BUDGET_EXCEEDED'], 0.0009, undefined, false], // a refusal
];

function newHistogram(registry: Registry) {
  return new PromOtelHistogram({
    name: 'mcp_client_operation_duration_seconds',
    help: 'MCP requests sent to upstreams',
    labelNames: LABELS,
    otelName: 'mcp.client.operation.duration',
    otelDescription: 'MCP requests sent to upstreams',
    unit: 's',
    attributeNames: ATTRIBUTES,
    buckets: BUCKETS,
    registry,
  });
}

/**
 * A PromOtelHistogram exported with `temporality` beside the OpenTelemetry SDK's own histogram,
 * exported the same way; `record` records the same calls into both (the refusals into ours only).
 */
function sideBySide(temporality: AggregationTemporality) {
  const h = newHistogram(new Registry());
  const reader = new PeriodicExportingMetricReader({
    exporter: new InMemoryMetricExporter(temporality),
    metricProducers: [otelHistogramsProducer('tollgate-edge', [h], temporality)],
  });
  const provider = new MeterProvider({ readers: [reader] });
  const referenceReader = new PeriodicExportingMetricReader({ exporter: new InMemoryMetricExporter(temporality) });
  const referenceProvider = new MeterProvider({ readers: [referenceReader] });
  const reference = referenceProvider.getMeter('tollgate-edge').createHistogram('mcp.client.operation.duration', {
    unit: 's',
    description: 'MCP requests sent to upstreams',
    advice: { explicitBucketBoundaries: BUCKETS },
  });
  const record = (records: typeof RECORDS) => {
    for (const [labels, seconds, errorType, exported] of records) {
      h.record(labels, seconds, errorType, exported);
      if (!exported) continue;
      const attributes: Record<string, string> = Object.fromEntries(ATTRIBUTES.map((a, i) => [a, labels[i]]));
      if (errorType) attributes['error.type'] = errorType;
      reference.record(seconds, attributes);
    }
  };
  return { reader, provider, referenceReader, referenceProvider, record };
}

async function collect(provider: MeterProvider, reader: PeriodicExportingMetricReader) {
  const { resourceMetrics } = await reader.collect();
  await provider.shutdown();
  return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics) as HistogramMetricData[];
}

describe('PromOtelHistogram', () => {
  it("should serve the same /metrics text as prom-client's own Histogram when both record the same calls", async () => {
    const ours = new Registry();
    const h = newHistogram(ours);
    const theirs = new Registry();
    const reference = new Histogram({
      name: 'mcp_client_operation_duration_seconds',
      help: 'MCP requests sent to upstreams',
      labelNames: LABELS,
      buckets: BUCKETS,
      registers: [theirs],
    });
    for (const [labels, seconds, errorType, exported] of RECORDS) {
      h.record(labels, seconds, errorType, exported);
      reference.observe(Object.fromEntries(LABELS.map((l, i) => [l, labels[i]])), seconds);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
  });

  it("should export over OTLP what the OpenTelemetry SDK's own histogram would, with error.type and without the refusals", async () => {
    const { reader, provider, referenceReader, referenceProvider, record } = sideBySide(
      AggregationTemporality.CUMULATIVE,
    );
    record(RECORDS);

    const [metric] = await collect(provider, reader);
    const [expected] = await collect(referenceProvider, referenceReader);
    expect(metric.dataPointType).toBe(DataPointType.HISTOGRAM);
    expect(metric.aggregationTemporality).toBe(AggregationTemporality.CUMULATIVE);
    expect(metric.descriptor).toMatchObject({
      name: expected.descriptor.name,
      unit: expected.descriptor.unit,
      description: expected.descriptor.description,
      valueType: expected.descriptor.valueType,
    });
    const points = (m: HistogramMetricData) =>
      m.dataPoints
        .map((p) => ({ attributes: p.attributes, value: p.value }))
        .sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
    expect(points(metric)).toEqual(points(expected));
    expect(metric.dataPoints).toHaveLength(4);
  });

  it("should export delta histograms as the OpenTelemetry SDK's own do when the exporter asks for delta temporality", async () => {
    const { reader, provider, referenceReader, referenceProvider, record } = sideBySide(AggregationTemporality.DELTA);
    const points = async (r: PeriodicExportingMetricReader) => {
      const { resourceMetrics } = await r.collect();
      const [m] = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics) as HistogramMetricData[];
      // Nothing new since the last export: the SDK reports no metric at all.
      if (!m) return [];
      expect(m.aggregationTemporality).toBe(AggregationTemporality.DELTA);
      return m.dataPoints
        .map((p) => ({ attributes: p.attributes, value: p.value }))
        .sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
    };

    // Three exports: everything, then the first series again and a new one, then nothing new.
    record(RECORDS);
    const first = await points(reader);
    expect(first).toEqual(await points(referenceReader));
    expect(first).toHaveLength(4);
    record([
      [['tools/call', 'gh__search', 'gh', 'ok'], 0.03, undefined, true],
      [['tools/call', 'gh__search', 'gh', 'ok'], 0.0001, undefined, true],
      [['tools/call', 'fs__read', 'fs', 'ok'], 7, undefined, true],
    ]);
    const second = await points(reader);
    expect(second).toEqual(await points(referenceReader));
    expect(second.map((p) => p.value.count)).toEqual([1, 2]);
    expect(await points(reader)).toEqual([]);
    expect(await points(referenceReader)).toEqual([]);
    await provider.shutdown();
    await referenceProvider.shutdown();
  });
});
