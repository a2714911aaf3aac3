import {
  CanActivate,
  ExecutionContext,
  Inject,
  Injectable,
  NotFoundException,
  UnauthorizedException,
} from '@nestjs/common';
import { MetricsConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import type { Request, Response } from 'express';
import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * /metrics show spend and traffic: only a bearer of METRICS_TOKEN reads them (401 with
 * `WWW-Authenticate` otherwise); with no token configured they are not served (404).
 */
@Injectable()
export class MetricsTokenGuard implements CanActivate {
  // Compared as digests: equal lengths for timingSafeEqual, and the token's length does not leak.
  private readonly tokenDigest: Buffer | null;

  constructor(@Inject(TOLLGATE_CONFIG) config: { metrics: MetricsConfig }) {
    this.tokenDigest = config.metrics.token ? digest(config.metrics.token) : null;
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.tokenDigest)
      throw new NotFoundException('Metrics are not served: set METRICS_TOKEN to read them with a bearer token');
    const req = context.switchToHttp().getRequest<Request>();
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (match && timingSafeEqual(digest(match[1]), this.tokenDigest)) return true;
    context
      .switchToHttp()
      .getResponse<Response>()
      .setHeader('WWW-Authenticate', `Bearer realm="tollgate-metrics"${match ? ', error="invalid_token"' : ''}`);
    throw new UnauthorizedException('Metrics need "Authorization: Bearer <METRICS_TOKEN>"');
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}
