import { ApiProperty } from '@nestjs/swagger';
import type { AdminTokenListing } from '@tollgate/identity';
import { ADMIN_ROLES } from './create-admin-token.dto';

export class AdminTokenOwnerView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ nullable: true, type: String }) name!: string | null;
  @ApiProperty() email!: string;
}

/** An admin token as listed: never its secret or hash. */
export class AdminTokenView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ example: 'tga_Ab3dE9' }) prefix!: string;
  @ApiProperty({ enum: ADMIN_ROLES }) role!: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) orgId!: string | null;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) teamId!: string | null;
  @ApiProperty({ type: AdminTokenOwnerView, nullable: true, description: 'The user the token names (its owner)' })
  owner!: AdminTokenOwnerView | null;
  @ApiProperty({ nullable: true, type: String, description: 'Who holds a token that names no user' }) ownerLabel!:
    string | null;
  @ApiProperty() createdAt!: Date;
  @ApiProperty({ nullable: true, type: Date, description: 'Recorded at most once a minute' }) lastUsedAt!: Date | null;
  @ApiProperty({ nullable: true, type: Date }) expiresAt!: Date | null;
  @ApiProperty({ nullable: true, type: Date }) revokedAt!: Date | null;
}

export function toAdminTokenView(t: AdminTokenListing): AdminTokenView {
  return {
    id: t.id,
    name: t.name,
    prefix: t.prefix,
    role: t.role,
    orgId: t.orgId,
    teamId: t.teamId,
    owner: t.owner,
    ownerLabel: t.ownerLabel,
    createdAt: t.createdAt,
    lastUsedAt: t.lastUsedAt,
    expiresAt: t.expiresAt,
    revokedAt: t.revokedAt,
  };
}
