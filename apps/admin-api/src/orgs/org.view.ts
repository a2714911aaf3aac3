import { ApiProperty } from '@nestjs/swagger';
import type { Organization } from '@tollgate/db';
import { TRAIL_MODES, TrailMode } from '@tollgate/kernel';

export class OrgView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() slug!: string;
  @ApiProperty({ example: 'UTC' }) timeZone!: string;
  @ApiProperty({ example: 'USD', description: 'ISO 4217 code of the unit of its micro-unit amounts' })
  currency!: string;
  @ApiProperty() autoApproveTools!: boolean;
  @ApiProperty({ enum: TRAIL_MODES, description: 'What is kept of agents’ trails' }) trailMode!: TrailMode;
  @ApiProperty({ type: 'integer', description: 'Days a trail step is kept' }) trailRetentionDays!: number;
  @ApiProperty({
    nullable: true,
    type: Date,
    description: 'Set while the organization is disabled: the edge refuses its keys with ORG_DISABLED',
  })
  disabledAt!: Date | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'The zone before the last change; periods running then keep its bounds',
  })
  previousTimeZone!: string | null;
  @ApiProperty({ nullable: true, type: Date }) timeZoneChangedAt!: Date | null;
  @ApiProperty() createdAt!: Date;
  @ApiProperty() updatedAt!: Date;
}

export function toOrgView(org: Organization): OrgView {
  return {
    id: org.id,
    name: org.name,
    slug: org.slug,
    timeZone: org.timeZone,
    currency: org.currency,
    autoApproveTools: org.autoApproveTools,
    trailMode: org.trailMode,
    trailRetentionDays: org.trailRetentionDays,
    disabledAt: org.disabledAt,
    previousTimeZone: org.previousTimeZone,
    timeZoneChangedAt: org.timeZoneChangedAt,
    createdAt: org.createdAt,
    updatedAt: org.updatedAt,
  };
}
