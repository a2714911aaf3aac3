import { ApiProperty } from '@nestjs/swagger';
import type { User } from '@tollgate/db';

export class UserView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) orgId!: string;
  @ApiProperty() email!: string;
  @ApiProperty({ nullable: true, type: String }) name!: string | null;
  @ApiProperty({ nullable: true, type: Date, description: 'When the user was offboarded (no way in since)' })
  offboardedAt!: Date | null;
  @ApiProperty({
    nullable: true,
    enum: ['ORG_ADMIN', 'FINANCE'],
    description: 'The organisation-wide role (null: only what their team memberships give)',
  })
  orgRole!: 'ORG_ADMIN' | 'FINANCE' | null;
  @ApiProperty() createdAt!: Date;
  @ApiProperty() updatedAt!: Date;
}

export function toUserView(u: User): UserView {
  return {
    id: u.id,
    orgId: u.orgId,
    email: u.email,
    name: u.name,
    offboardedAt: u.offboardedAt,
    orgRole: u.orgRole,
    createdAt: u.createdAt,
    updatedAt: u.updatedAt,
  };
}

export class OffboardedUserView {
  @ApiProperty({ format: 'uuid' }) userId!: string;
  @ApiProperty() offboardedAt!: Date;
  @ApiProperty({ type: [String], description: 'Keys revoked (static and OAuth: their tokens and refreshes stop)' })
  revokedKeyIds!: string[];
  @ApiProperty({ type: [String] }) revokedAdminTokenIds!: string[];
  @ApiProperty({ type: [String], description: 'Teams the user left' }) removedFromTeamIds!: string[];
  @ApiProperty({ type: [String], description: 'Upstreams whose per-user OAuth tokens were forgotten' })
  disconnectedUpstreamIds!: string[];
}

export class MovedUserView {
  @ApiProperty({ format: 'uuid' }) userId!: string;
  @ApiProperty({ format: 'uuid' }) fromTeamId!: string;
  @ApiProperty({ format: 'uuid' }) toTeamId!: string;
  @ApiProperty() isTeamAdmin!: boolean;
  @ApiProperty({ type: [String], description: 'Keys that now spend for the new team' }) movedKeyIds!: string[];
  @ApiProperty({ type: [String], description: 'Keys revoked (moveKeys: false)' }) revokedKeyIds!: string[];
  @ApiProperty({ type: [String], description: 'TEAM_ADMIN tokens for the old team, revoked' })
  revokedAdminTokenIds!: string[];
}
