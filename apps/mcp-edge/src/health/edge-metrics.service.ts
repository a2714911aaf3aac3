import { Injectable } from '@nestjs/common';
import { Micros } from '@tollgate/kernel';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics of one edge process, served at /metrics. */
@Injectable()
export class EdgeMetrics {
  readonly registry = new Registry();
  private readonly calls = new Counter({
    name: 'tollgate_edge_tool_calls_total',
    help: 'Governed tool calls by outcome',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  private readonly refusals = new Counter({
    name: 'tollgate_edge_refusals_total',
    help: 'Calls refused before the upstream, by code',
    labelNames: ['code'],
    registers: [this.registry],
  });
  private readonly spend = new Counter({
    name: 'tollgate_edge_spend_micros_total',
    help: 'Micro-units charged',
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'tollgate_edge_tool_call_seconds',
    help: 'Governed call latency, upstream included',
    labelNames: ['outcome'],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  recordCall(_tool: string, outcome: string, latencyMs: number, cost: Micros): void {
    this.calls.inc({ outcome });
    this.latency.observe({ outcome }, latencyMs / 1000);
    if (cost > 0n) this.spend.inc(Number(cost));
  }

  recordRefusal(_tool: string, code: string): void {
    this.refusals.inc({ code });
  }
}
