import { ApiProperty } from '@nestjs/swagger';
import type { ConnectionHealth, StartedConnection } from '@tollgate/connections';

/** A user's connection to a per-user OAuth upstream: its health, never its tokens. */
export class ConnectionView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) userId!: string;
  @ApiProperty({ format: 'uuid' }) upstreamId!: string;
  @ApiProperty({
    enum: ['valid', 'expiring', 'expired', 'refresh_failed'],
    description: 'expiring: the access token expires within 10 minutes',
  })
  health!: string;
  @ApiProperty({ nullable: true, type: String }) scope!: string | null;
  @ApiProperty({ nullable: true, type: Date, description: 'When the current access token expires' })
  expiresAt!: Date | null;
  @ApiProperty({ description: 'Whether Tollgate holds a refresh token it can use' }) canRefresh!: boolean;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Why the last refresh failed (the user must connect again)',
  })
  lastRefreshError!: string | null;
  @ApiProperty() createdAt!: Date;
  @ApiProperty() updatedAt!: Date;
}

export class StartedConnectionView {
  @ApiProperty({ description: 'Open in the user’s browser: the upstream’s authorization page (code flow with PKCE)' })
  authorizationUrl!: string;
  @ApiProperty({ description: 'The state bound to this user and upstream; single use' }) state!: string;
  @ApiProperty() expiresAt!: Date;
}

export class ConnectedView {
  @ApiProperty({ enum: ['connected'] }) status!: 'connected';
  @ApiProperty({ format: 'uuid' }) upstreamId!: string;
  @ApiProperty({ description: 'The catalog sync queued now that a user can list the upstream’s tools' })
  syncJobId!: string;
}

export function toConnectionView(c: ConnectionHealth): ConnectionView {
  return {
    id: c.id,
    userId: c.userId,
    upstreamId: c.upstreamId,
    health: c.health,
    scope: c.scope,
    expiresAt: c.expiresAt,
    canRefresh: c.canRefresh,
    lastRefreshError: c.lastRefreshError,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  };
}

export function toStartedConnectionView(s: StartedConnection): StartedConnectionView {
  return { authorizationUrl: s.authorizationUrl, state: s.state, expiresAt: s.expiresAt };
}
