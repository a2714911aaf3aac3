import { Injectable } from '@nestjs/common';
import { CallAdmissionService } from '@tollgate/admission';
import { Micros } from '@tollgate/kernel';
import { PrismaService } from '@tollgate/db';
import { ClientLatencyMetrics, LabelGuard, PromOtelHistogram, ShutdownDrain } from '@tollgate/observability';
import { RedisService } from '@tollgate/redis';
import { UpstreamClientPool } from '@tollgate/mcp-client';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

const CALL_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30];
// Distinct tools, upstreams and orgs a label may take before later ones count as `other`.
const MAX_TOOLS = 500;
const MAX_UPSTREAMS = 200;
const MAX_ORGS = 1000;

/** Where a call's rate limits and budgets were checked: this edge's leases, or a Redis round trip. */
export type AdmissionPath = 'lease' | 'redis';

/**
 * Prometheus metrics of one edge process, served at /metrics. Every series is this process's own
 * (counters and histograms sum across replicas; the breaker gauge is per replica, see
 * docs/operations.md). The `mcp_*_operation_duration_seconds` histograms follow the OpenTelemetry
 * semantic conventions for MCP (`mcp.server.operation.duration`, `mcp.client.operation.duration`).
 */
@Injectable()
export class EdgeMetrics {
  readonly registry = new Registry();
  private readonly tools = new LabelGuard(MAX_TOOLS);
  private readonly upstreamNames = new LabelGuard(MAX_UPSTREAMS);
  private readonly orgs = new LabelGuard(MAX_ORGS);
  private readonly calls = new Counter({
    name: 'tollgate_edge_tool_calls_total',
    help: 'Governed tool calls that reached the upstream, by outcome and upstream',
    labelNames: ['outcome', 'upstream'],
    registers: [this.registry],
  });
  private readonly refusals = new Counter({
    name: 'tollgate_edge_refusals_total',
    help: 'Calls refused before the upstream, by code and organisation',
    labelNames: ['code', 'org'],
    registers: [this.registry],
  });
  private readonly spend = new Counter({
    name: 'tollgate_edge_spend_micros_total',
    help: 'Micro-units charged',
    registers: [this.registry],
  });
  private readonly latency = this.prometheusHistogram(
    'tollgate_edge_tool_call_seconds',
    'Governed call latency, upstream included',
    'outcome',
    CALL_BUCKETS,
  );
  // `mcp.server.operation.duration` and `mcp.client.operation.duration`, in Prometheus and through
  // OpenTelemetry (exported over OTLP when telemetry is on): recorded once for both.
  private readonly operations = {
    server: this.operationHistograms('server', 'MCP requests served to agents'),
    client: this.operationHistograms('client', 'MCP requests sent to upstreams'),
  };
  private readonly upstreamErrors = new Counter({
    name: 'tollgate_edge_upstream_errors_total',
    help: 'Upstream calls that failed (time-out, connection, protocol, circuit open...), by upstream and error type',
    labelNames: ['upstream', 'error_type'],
    registers: [this.registry],
  });
  private readonly admissions = this.prometheusHistogram(
    'tollgate_edge_admission_seconds',
    "Rate-limit and budget admission of a call: against this edge's leases (no round trip) or in Redis",
    'path',
    [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5],
  );
  readonly draining = new Gauge({
    name: 'tollgate_draining',
    help: '1 once the process received SIGTERM and drains (readiness fails, new connections are refused)',
    registers: [this.registry],
  });

  constructor(
    pool: UpstreamClientPool,
    drain: ShutdownDrain,
    admission: CallAdmissionService,
    redis: RedisService,
    prisma: PrismaService,
  ) {
    collectDefaultMetrics({ register: this.registry });
    new ClientLatencyMetrics(this.registry).watch(redis.client, [prisma.pool, prisma.reportsPool]);
    drain.onDrain(() => this.draining.set(1));
    const upstreamNames = this.upstreamNames;
    new Gauge({
      name: 'tollgate_edge_upstream_breaker_open',
      help: "1 while this edge's circuit breaker for the upstream is open (calls fail fast), 0 when closed or half-open",
      labelNames: ['upstream'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const b of pool.breakerStates()) this.set({ upstream: upstreamNames.value(b.upstream) }, b.open ? 1 : 0);
      },
    });
    new Counter({
      name: 'tollgate_redis_completion_wait_timeouts_total',
      help: 'Completions whose opt-in wait for replicas (REDIS_COMPLETION_WAIT_REPLICAS) ended short at its timeout',
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(admission.completionWaitShortfalls);
      },
    });
  }

  recordCall(tool: string, upstream: string, outcome: string, latencyMs: number, cost: Micros): void {
    const up = this.upstreamNames.value(upstream);
    this.calls.inc({ outcome, upstream: up });
    this.latency.record([outcome], latencyMs / 1000, undefined, false);
    this.observeOperation('server', this.tools.value(tool), up, outcome, latencyMs);
    if (cost > 0n) this.spend.inc(Number(cost));
  }

  recordRefusal(tool: string, code: string, orgId: string, latencyMs?: number): void {
    this.refusals.inc({ code, org: this.orgs.value(orgId) });
    // Prometheus only: refusals are not recorded in the OpenTelemetry histogram.
    if (latencyMs !== undefined)
      this.operations.server.record(
        operationLabels(this.tools.value(tool), '', code),
        latencyMs / 1000,
        undefined,
        false,
      );
  }

  /** One upstream `tools/call`: `ok`, `tool_error` (answered isError) or `error` (with its type). */
  recordUpstreamCall(
    upstream: string,
    tool: string,
    latencyMs: number,
    outcome: 'ok' | 'tool_error' | 'error',
    errorType?: string,
  ): void {
    const up = this.upstreamNames.value(upstream);
    this.observeOperation('client', this.tools.value(tool), up, outcome, latencyMs, errorType);
    if (outcome === 'error') this.upstreamErrors.inc({ upstream: up, error_type: errorType ?? 'unknown' });
  }

  recordAdmission(path: AdmissionPath, latencyMs: number): void {
    this.admissions.record([path], latencyMs / 1000, undefined, false);
  }

  /**
   * A histogram served on /metrics only (recorded with `exported: false`), in prom-client's text:
   * prom-client's own Histogram hashes the label object and turns the bucket bound into a property
   * name on every observe, which profiled at several microseconds a call (the admission one most).
   */
  private prometheusHistogram(name: string, help: string, label: string, buckets: number[]): PromOtelHistogram {
    return new PromOtelHistogram({
      name,
      help,
      labelNames: [label],
      otelName: name,
      otelDescription: help,
      unit: 's',
      attributeNames: [label],
      buckets,
      registry: this.registry,
    });
  }

  private operationHistograms(side: 'server' | 'client', description: string): PromOtelHistogram {
    return new PromOtelHistogram({
      name: `mcp_${side}_operation_duration_seconds`,
      help: `${description} (mcp.${side}.operation.duration), by method, tool, upstream and outcome`,
      labelNames: ['mcp_method_name', 'gen_ai_tool_name', 'upstream', 'outcome'],
      otelName: `mcp.${side}.operation.duration`,
      otelDescription: description,
      unit: 's',
      attributeNames: ['mcp.method.name', 'gen_ai.tool.name', 'tollgate.upstream', 'tollgate.outcome'],
      buckets: CALL_BUCKETS,
      registry: this.registry,
    });
  }

  private observeOperation(
    side: 'server' | 'client',
    toolLabel: string,
    upstreamLabel: string,
    outcome: string,
    latencyMs: number,
    errorType?: string,
  ): void {
    this.operations[side].record(operationLabels(toolLabel, upstreamLabel, outcome), latencyMs / 1000, errorType);
  }
}

/** The label values of both operation histograms, in their `labelNames` order. */
function operationLabels(tool: string, upstream: string, outcome: string): string[] {
  return ['tools/call', tool, upstream, outcome];
}
