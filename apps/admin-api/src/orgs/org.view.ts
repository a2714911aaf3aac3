import { ApiProperty } from '@nestjs/swagger';
import type { Organization } from '@tollgate/db';

export class OrgView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() slug!: string;
  @ApiProperty({ example: 'UTC' }) timeZone!: string;
  @ApiProperty() autoApproveTools!: boolean;
  @ApiProperty() createdAt!: Date;
  @ApiProperty() updatedAt!: Date;
}

export function toOrgView(org: Organization): OrgView {
  return {
    id: org.id,
    name: org.name,
    slug: org.slug,
    timeZone: org.timeZone,
    autoApproveTools: org.autoApproveTools,
    createdAt: org.createdAt,
    updatedAt: org.updatedAt,
  };
}
