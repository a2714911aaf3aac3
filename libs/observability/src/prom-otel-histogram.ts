/* eslint-disable @typescript-eslint/no-require-imports -- the metrics SDK loads only when telemetry is on */
import { ValueType, type Attributes, type HrTime } from '@opentelemetry/api';
import type { AggregationTemporality, HistogramMetricData, MetricProducer } from '@opentelemetry/sdk-metrics';
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
  /** Sum, min and max since the delta export last took them (takeWindow). */
  windowSum: number;
  windowMin: number;
  windowMax: number;
}

/** One exported data point's counts (the histogram's value without its bounds). */
interface Counts {
  buckets: number[];
  sum: number;
  count: number;
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
        windowSum: 0,
        windowMin: Infinity,
        windowMax: -Infinity,
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
    series.windowSum += value;
    if (value < series.windowMin) series.windowMin = value;
    if (value > series.windowMax) series.windowMax = value;
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
    return this.otelPoints(endTime, (s) => ({
      startTime: this.startTime,
      value: { buckets: [...s.buckets], sum: s.sum, count: s.count, min: s.min, max: s.max },
    }));
  }

  /**
   * The same series as delta points for `deltas` (one delta reader's state): what each counted since
   * that reader's previous export (from its time, or from the start), and no point for a series that
   * counted nothing since. The first delta reader's points take their sum, min and max from the
   * series' one window (`takeWindow`: a sum of the interval's values, as the SDK's, not a difference
   * of two large floats); another delta reader's sum is that difference and its points carry no min
   * or max (both optional in OTLP).
   */
  otelDeltaData(endTime: HrTime, deltas: DeltaState) {
    const previous = deltas.last.get(this) ?? new Map<Series, Counts>();
    const startTime = deltas.time.get(this) ?? this.startTime;
    const ownsWindow = (this.windowOwner ??= deltas) === deltas;
    const next = new Map<Series, Counts>();
    const data = this.otelPoints(endTime, (s) => {
      const before = previous.get(s);
      const now: Counts = { buckets: [...s.buckets], sum: s.sum, count: s.count };
      next.set(s, now);
      const window = ownsWindow ? takeWindow(s) : undefined;
      if (before && before.count === now.count) return undefined;
      return {
        startTime,
        value: {
          buckets: before ? now.buckets.map((c, i) => c - before.buckets[i]) : now.buckets,
          sum: now.sum - (before?.sum ?? 0),
          count: now.count - (before?.count ?? 0),
          ...(ownsWindow ? window : {}),
        },
      };
    });
    deltas.last.set(this, next);
    deltas.time.set(this, endTime);
    return data;
  }

  /** The delta reader whose exports take the series' min and max windows (the first to export). */
  private windowOwner: DeltaState | undefined;

  private otelPoints(
    endTime: HrTime,
    point: (s: Series) => { startTime: HrTime; value: Counts & { min?: number; max?: number } } | undefined,
  ) {
    const { otelName, otelDescription, unit, attributeNames, buckets } = this.options;
    const dataPoints = [];
    for (const s of this.series.values()) {
      if (!s.exported) continue;
      const p = point(s);
      if (!p) continue;
      const attributes: Attributes = {};
      attributeNames.forEach((a, i) => (attributes[a] = s.labels[i]));
      if (s.errorType !== undefined) attributes['error.type'] = s.errorType;
      const { buckets: counts, ...rest } = p.value;
      dataPoints.push({
        attributes,
        startTime: p.startTime,
        endTime,
        value: { buckets: { boundaries: [...buckets], counts }, ...rest },
      });
    }
    return { name: otelName, description: otelDescription, unit, dataPoints };
  }
}

/** A delta reader's state: the counts each series had at its last export, and when that was. */
interface DeltaState {
  last: Map<PromOtelHistogram, Map<Series, Counts>>;
  time: Map<PromOtelHistogram, HrTime>;
}

/** The series' sum, min and max since the last call (none if it counted nothing since), and a new window. */
function takeWindow(s: Series): { sum: number; min: number; max: number } | undefined {
  const window = s.windowMin <= s.windowMax ? { sum: s.windowSum, min: s.windowMin, max: s.windowMax } : undefined;
  s.windowSum = 0;
  s.windowMin = Infinity;
  s.windowMax = -Infinity;
  return window;
}

function nowHrTime(): HrTime {
  const ms = Date.now();
  return [Math.floor(ms / 1000), (ms % 1000) * 1e6];
}

/**
 * The OpenTelemetry MetricProducer of every PromOtelHistogram (startTelemetry hands one to each
 * metric reader): at each export, their series as explicit-bucket histograms, in one scope, with the
 * reader's exporter's temporality for histograms (`temporality`; an OTLP exporter takes it from
 * OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: delta for `delta` and `lowmemory`). A delta
 * producer keeps what it last exported, so each reader needs its own.
 */
export function otelHistogramsProducer(
  scopeName: string,
  histograms: Iterable<PromOtelHistogram> = OTEL_HISTOGRAMS,
  temporality?: AggregationTemporality,
): MetricProducer {
  const { AggregationTemporality, DataPointType } =
    require('@opentelemetry/sdk-metrics') as typeof import('@opentelemetry/sdk-metrics');
  const { emptyResource } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const aggregationTemporality = temporality ?? AggregationTemporality.CUMULATIVE;
  const deltas: DeltaState | undefined =
    aggregationTemporality === AggregationTemporality.DELTA ? { last: new Map(), time: new Map() } : undefined;
  return {
    async collect() {
      const endTime = nowHrTime();
      const metrics: HistogramMetricData[] = [];
      for (const h of histograms) {
        const { name, description, unit, dataPoints } = deltas ? h.otelDeltaData(endTime, deltas) : h.otelData(endTime);
        // As the SDK: a histogram with nothing to report (nothing recorded, or nothing since the last
        // delta export) is left out.
        if (dataPoints.length === 0) continue;
        metrics.push({
          descriptor: { name, description, unit, valueType: ValueType.DOUBLE },
          aggregationTemporality,
          dataPointType: DataPointType.HISTOGRAM,
          dataPoints,
        });
      }
      // The reader keeps its own resource (the SDK's): a producer's is not exported. No histograms
      // (the admin API, the worker) or no points: no scope.
      const scopeMetrics = metrics.length > 0 ? [{ scope: { name: scopeName }, metrics }] : [];
      return { resourceMetrics: { resource: emptyResource(), scopeMetrics }, errors: [] };
    },
  };
}
