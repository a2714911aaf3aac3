import { Inject, Injectable, Logger } from '@nestjs/common';
import { EdgeConfig, TOLLGATE_CONFIG } from '@tollgate/config';

export interface AccessLogEntry {
  tool: string;
  upstream: string;
  /** OK, TOOL_ERROR, UPSTREAM_ERROR, or the refusal code (BUDGET_EXCEEDED, RATE_LIMITED...). */
  outcome: string;
  costMicros: bigint;
  outputTokens: number;
  latencyMs: number;
}

/**
 * The optional per-call access log: one line (JSON, with the request, call, org and key ids of the
 * log context) for a sampled share of governed calls, `EDGE_ACCESS_LOG_SAMPLE` (0: none).
 */
@Injectable()
export class EdgeAccessLog {
  private readonly logger = new Logger('Access');
  private readonly sample: number;

  constructor(@Inject(TOLLGATE_CONFIG) config: EdgeConfig) {
    this.sample = config.edge.accessLogSample;
  }

  /** Whether any call is logged (a sample above 0): callers need not build an entry otherwise. */
  get enabled(): boolean {
    return this.sample > 0;
  }

  record(entry: AccessLogEntry): void {
    if (this.sample <= 0 || (this.sample < 1 && Math.random() >= this.sample)) return;
    this.logger.log({
      msg: 'tools/call',
      method: 'tools/call',
      tool: entry.tool,
      upstream: entry.upstream,
      outcome: entry.outcome,
      costMicros: entry.costMicros.toString(),
      outputTokens: entry.outputTokens,
      latencyMs: entry.latencyMs,
    });
  }
}
