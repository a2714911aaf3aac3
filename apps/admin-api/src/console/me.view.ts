import { ApiProperty } from '@nestjs/swagger';
import type { AdminPrincipal } from '@tollgate/identity';

export class MeTokenView {
  @ApiProperty({ description: 'The token id (the bootstrap token has a fixed one)' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ nullable: true, type: String }) prefix!: string | null;
}

export class MePersonView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ nullable: true, type: String }) name!: string | null;
  @ApiProperty() email!: string;
}

/** Who the caller is: what the console needs to show the pages the role allows. */
export class MeView {
  @ApiProperty({ enum: ['PLATFORM_ADMIN', 'ORG_ADMIN', 'TEAM_ADMIN', 'FINANCE', 'MEMBER'] }) role!: AdminPrincipal['role'];
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) orgId!: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) teamId!: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) userId!: string | null;
  @ApiProperty({ type: MeTokenView, description: 'The admin token (or bootstrap token) used; never its secret' }) token!: MeTokenView;
  @ApiProperty({ type: MePersonView, nullable: true, description: 'The person the token names' }) user!: MePersonView | null;
}

export function toMeView(admin: AdminPrincipal): MeView {
  const actor = admin.actor;
  return {
    role: admin.role,
    orgId: admin.orgId,
    teamId: admin.teamId,
    userId: admin.userId,
    token: { id: admin.tokenId, name: actor?.tokenName ?? admin.tokenId, prefix: actor?.tokenPrefix ?? null },
    user: actor?.user ? { id: actor.user.id, name: actor.user.name, email: actor.user.email } : null,
  };
}
