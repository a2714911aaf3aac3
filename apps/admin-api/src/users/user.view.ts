import { ApiProperty } from '@nestjs/swagger';
import type { User } from '@tollgate/db';

export class UserView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) orgId!: string;
  @ApiProperty() email!: string;
  @ApiProperty({ nullable: true, type: String }) name!: string | null;
  @ApiProperty() createdAt!: Date;
  @ApiProperty() updatedAt!: Date;
}

export function toUserView(u: User): UserView {
  return { id: u.id, orgId: u.orgId, email: u.email, name: u.name, createdAt: u.createdAt, updatedAt: u.updatedAt };
}
