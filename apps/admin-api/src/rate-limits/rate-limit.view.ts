import { ApiProperty } from '@nestjs/swagger';
import type { RateLimit } from '@tollgate/db';

export class RateLimitView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) orgId!: string;
  @ApiProperty() scope!: string;
  @ApiProperty({ format: 'uuid' }) scopeId!: string;
  @ApiProperty() toolPattern!: string;
  @ApiProperty({ type: 'integer', nullable: true }) callsPerWindow!: number | null;
  @ApiProperty({ type: 'integer' }) windowSeconds!: number;
  @ApiProperty({ type: 'integer', nullable: true }) maxConcurrent!: number | null;
  @ApiProperty() createdAt!: Date;
}

export function toRateLimitView(r: RateLimit): RateLimitView {
  return {
    id: r.id,
    orgId: r.orgId,
    scope: r.scope,
    scopeId: r.scopeId,
    toolPattern: r.toolPattern,
    callsPerWindow: r.callsPerWindow,
    windowSeconds: r.windowSeconds,
    maxConcurrent: r.maxConcurrent,
    createdAt: r.createdAt,
  };
}
