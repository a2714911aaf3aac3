import { Injectable } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { ClientLatencyMetrics } from '@tollgate/observability';
import { RedisService } from '@tollgate/redis';
import { Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics of one admin API process, served at /metrics (METRICS_TOKEN, as on the edge and worker). */
@Injectable()
export class AdminMetrics {
  readonly registry = new Registry();
  private readonly requests = new Histogram({
    name: 'tollgate_admin_http_request_seconds',
    help: 'Admin API requests by method, route (the pattern, not the path) and status class',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });

  constructor(redis: RedisService, prisma: PrismaService) {
    collectDefaultMetrics({ register: this.registry });
    new ClientLatencyMetrics(this.registry).watch(redis.client, [prisma.pool, prisma.reportsPool]);
  }

  /** `route` is Express's matched pattern (`/v1/orgs/:orgId`), so ids do not become label values. */
  recordRequest(method: string, route: string | undefined, status: number, seconds: number): void {
    this.requests.observe({ method, route: route ?? 'unmatched', status: `${Math.floor(status / 100)}xx` }, seconds);
  }
}
