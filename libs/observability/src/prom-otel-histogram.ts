/* eslint-disable @typescript-eslint/no-require-imports -- the metrics SDK loads only when telemetry is on */
import { ValueType, type Attributes, type HrTime } from '@opentelemetry/api';
import type { HistogramMetricData, MetricProducer } from '@opentelemetry/sdk-metrics';
import type { Registry } from 'prom-client';
import { telemetryRunning } from './telemetry';

/** The PromOtelHistograms made while telemetry runs, for otelHistogramsProducer. */
const OTEL_HISTOGRAMS = new Set<PromOtelHistogram>();

/** One label set's counts: `buckets[i]` counts the values in (bounds[i-1], bounds[i]], the last one above every bound. */
interface Series {
  labels: readonly string[];
  errorType: string | undefined;
  exported: boolean;
  buckets: number[];
  sum: number;
  count: number;
  min: number;
  max: number;
}

/** What a PromOtelHistogram is called in Prometheus and in OpenTelemetry. */
export interface PromOtelHistogramOptions {
  /** Prometheus: the family's name, help, and label names (the label values of `record`, in order). */
  name: string;
  help: string;
  labelNames: readonly string[];
  /** OpenTelemetry: the instrument's name, description and unit, and the attribute for each label. */
  otelName: string;
  otelDescription: string;
  unit: string;
  attributeNames: readonly string[];
  /** Upper bounds, in increasing order (both sides use the same). */
  buckets: readonly number[];
  registry: Registry;
}

/**
 * A histogram recorded once and served twice: on `/metrics` (a prom-client collector in `registry`,
 * the same text prom-client's own Histogram writes) and over OTLP (otelHistogramsProducer reads it
 * at each export). A histogram kept by each library was two records a call, and each hashes the
 * label set on every record (prom-client's and the OpenTelemetry SDK's are the costliest part of
 * recording); here a record joins the label values into a map key and counts.
 */
export class PromOtelHistogram {
  private readonly series = new Map<string, Series>();
  private readonly startTime: HrTime = nowHrTime();
  readonly name: string;

  constructor(private readonly options: PromOtelHistogramOptions) {
    this.name = options.name;
    options.registry.registerMetric(this.promMetric() as never);
    // Exported while telemetry runs (a process's one set of metrics; tests make many, with it off).
    if (telemetryRunning()) OTEL_HISTOGRAMS.add(this);
  }

  /**
   * Counts `value` under `labels` (in `labelNames` order). `errorType`: OpenTelemetry's `error.type`
   * attribute (Prometheus has no such label: its series sums them). `exported: false` keeps the
   * value out of OpenTelemetry (in Prometheus only).
   */
  record(labels: readonly string[], value: number, errorType?: string, exported = true): void {
    let key = labels.join('\u0000');
    if (errorType !== undefined) key += `\u0001${errorType}`;
    if (!exported) key += '\u0002';
    let series = this.series.get(key);
    if (!series) {
      series = {
        labels: [...labels],
        errorType,
        exported,
        buckets: new Array<number>(this.options.buckets.length + 1).fill(0),
        sum: 0,
        count: 0,
        min: Infinity,
        max: -Infinity,
      };
      this.series.set(key, series);
    }
    const bounds = this.options.buckets;
    let i = 0;
    while (i < bounds.length && value > bounds[i]) i++;
    series.buckets[i]++;
    series.sum += value;
    series.count++;
    if (value < series.min) series.min = value;
    if (value > series.max) series.max = value;
  }

  /** prom-client's metric interface: the family in the shape its Histogram's `get` answers. */
  private promMetric() {
    const { name, help, labelNames, buckets } = this.options;
    const bucketName = `${name}_bucket`;
    const values = () => {
      // One Prometheus series per label set, whatever its error types.
      const merged = new Map<
        string,
        { labels: Record<string, string>; buckets: number[]; sum: number; count: number }
      >();
      for (const s of this.series.values()) {
        const key = s.labels.join('\u0000');
        let m = merged.get(key);
        if (!m) {
          const labels: Record<string, string> = {};
          labelNames.forEach((l, i) => (labels[l] = s.labels[i]));
          m = { labels, buckets: new Array<number>(buckets.length + 1).fill(0), sum: 0, count: 0 };
          merged.set(key, m);
        }
        s.buckets.forEach((c, i) => (m.buckets[i] += c));
        m.sum += s.sum;
        m.count += s.count;
      }
      // prom-client's shape, `exemplar: null` on buckets included (none are kept).
      const out: {
        labels: Record<string, string | number>;
        sharedLabels: Record<string, string>;
        value: number;
        metricName: string;
        exemplar?: null;
      }[] = [];
      for (const m of merged.values()) {
        let cumulative = 0;
        buckets.forEach((le, i) => {
          cumulative += m.buckets[i];
          out.push({
            labels: { le },
            sharedLabels: m.labels,
            value: cumulative,
            metricName: bucketName,
            exemplar: null,
          });
        });
        out.push({
          labels: { le: '+Inf' },
          sharedLabels: m.labels,
          value: m.count,
          metricName: bucketName,
          exemplar: null,
        });
        out.push({ labels: {}, sharedLabels: m.labels, value: m.sum, metricName: `${name}_sum` });
        out.push({ labels: {}, sharedLabels: m.labels, value: m.count, metricName: `${name}_count` });
      }
      return out;
    };
    return {
      name,
      help,
      type: 'histogram',
      aggregator: 'sum',
      getForPromString: async () => ({ name, help, type: 'histogram', values: values(), aggregator: 'sum' }),
      get: async () => ({
        name,
        help,
        type: 'histogram',
        values: values().map(({ sharedLabels, labels, ...v }) => ({ ...v, labels: { ...labels, ...sharedLabels } })),
        aggregator: 'sum',
      }),
      reset: () => this.series.clear(),
    };
  }

  /** The OpenTelemetry data (cumulative, explicit buckets) of the series `record` exported. */
  otelData(endTime: HrTime) {
    const { otelName, otelDescription, unit, attributeNames, buckets } = this.options;
    const dataPoints = [];
    for (const s of this.series.values()) {
      if (!s.exported) continue;
      const attributes: Attributes = {};
      attributeNames.forEach((a, i) => (attributes[a] = s.labels[i]));
      if (s.errorType !== undefined) attributes['error.type'] = s.errorType;
      dataPoints.push({
        attributes,
        startTime: this.startTime,
        endTime,
        value: {
          buckets: { boundaries: [...buckets], counts: [...s.buckets] },
          sum: s.sum,
          count: s.count,
          min: s.min,
          max: s.max,
        },
      });
    }
    return { name: otelName, description: otelDescription, unit, dataPoints };
  }
}

function nowHrTime(): HrTime {
  const ms = Date.now();
  return [Math.floor(ms / 1000), (ms % 1000) * 1e6];
}

/**
 * The OpenTelemetry MetricProducer of every PromOtelHistogram (startTelemetry hands it to the metric
 * readers): at each export, their series as cumulative explicit-bucket histograms, in one scope.
 */
export function otelHistogramsProducer(
  scopeName: string,
  histograms: Iterable<PromOtelHistogram> = OTEL_HISTOGRAMS,
): MetricProducer {
  const { AggregationTemporality, DataPointType } =
    require('@opentelemetry/sdk-metrics') as typeof import('@opentelemetry/sdk-metrics');
  const { emptyResource } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  return {
    async collect() {
      const endTime = nowHrTime();
      const metrics: HistogramMetricData[] = [...histograms].map((h) => {
        const { name, description, unit, dataPoints } = h.otelData(endTime);
        return {
          descriptor: { name, description, unit, valueType: ValueType.DOUBLE },
          aggregationTemporality: AggregationTemporality.CUMULATIVE,
          dataPointType: DataPointType.HISTOGRAM,
          dataPoints,
        };
      });
      // The reader keeps its own resource (the SDK's): a producer's is not exported. No histograms
      // (the admin API, the worker): no scope.
      const scopeMetrics = metrics.length > 0 ? [{ scope: { name: scopeName }, metrics }] : [];
      return { resourceMetrics: { resource: emptyResource(), scopeMetrics }, errors: [] };
    },
  };
}
