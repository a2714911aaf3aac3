import { ApiProperty } from '@nestjs/swagger';
import type { Team, TeamMember } from '@tollgate/db';

export class TeamView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) orgId!: string;
  @ApiProperty() name!: string;
  @ApiProperty() createdAt!: Date;
  @ApiProperty() updatedAt!: Date;
}

export class TeamMemberView {
  @ApiProperty({ format: 'uuid' }) orgId!: string;
  @ApiProperty({ format: 'uuid' }) teamId!: string;
  @ApiProperty({ format: 'uuid' }) userId!: string;
  @ApiProperty() isTeamAdmin!: boolean;
  @ApiProperty() createdAt!: Date;
}

export class TeamMemberRemovedView {
  @ApiProperty({ format: 'uuid' }) teamId!: string;
  @ApiProperty({ format: 'uuid' }) userId!: string;
  @ApiProperty({ type: [String], description: 'The user’s keys in the team, revoked' }) revokedKeyIds!: string[];
  @ApiProperty({ type: [String], description: 'The user’s TEAM_ADMIN tokens for the team, revoked' })
  revokedAdminTokenIds!: string[];
}

export function toTeamView(t: Team): TeamView {
  return { id: t.id, orgId: t.orgId, name: t.name, createdAt: t.createdAt, updatedAt: t.updatedAt };
}

export function toTeamMemberView(m: TeamMember): TeamMemberView {
  return { orgId: m.orgId, teamId: m.teamId, userId: m.userId, isTeamAdmin: m.isTeamAdmin, createdAt: m.createdAt };
}
