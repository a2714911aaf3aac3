import { ApiProperty } from '@nestjs/swagger';
import type { AdminActor } from '@tollgate/identity';
import type { DescribedAuditEvent } from './audit.service';

export class AuditPersonView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ nullable: true, type: String }) name!: string | null;
  @ApiProperty() email!: string;
}

export class AuditActorView {
  @ApiProperty({ description: 'The admin token used ("bootstrap" for the bootstrap token)' }) tokenId!: string;
  @ApiProperty({ description: 'The token’s name (its label)' }) tokenName!: string;
  @ApiProperty({ nullable: true, type: String, example: 'tga_Ab3dE9' }) tokenPrefix!: string | null;
  @ApiProperty({ enum: ['PLATFORM_ADMIN', 'ORG_ADMIN', 'TEAM_ADMIN', 'FINANCE', 'MEMBER'] }) role!: string;
  @ApiProperty({
    type: AuditPersonView,
    nullable: true,
    description: 'The person the token names, as they were at the time',
  })
  user!: AuditPersonView | null;
  @ApiProperty({ nullable: true, type: String, description: 'Who holds a token that names no person' }) ownerLabel!:
    string | null;
}

/** Any JSON value (a field's value as the audit row recorded it). */
const JSON_VALUE = [
  { type: 'string' },
  { type: 'number' },
  { type: 'boolean' },
  { type: 'array', items: {} },
  { type: 'object', additionalProperties: true },
];

export class AuditFieldChangeView {
  @ApiProperty({ example: 'limitMicros' }) field!: string;
  @ApiProperty({
    required: false,
    nullable: true,
    oneOf: JSON_VALUE,
    description:
      'The value before the change: from the row itself, else from the previous row of the same target; null: it did not exist; absent: the trail does not know it',
  })
  before?: unknown;
  @ApiProperty({
    required: false,
    nullable: true,
    oneOf: JSON_VALUE,
    description: 'The value after the change; null: removed',
  })
  after?: unknown;
}

export class AuditEventView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) orgId!: string | null;
  @ApiProperty({ description: 'The admin token id that made the change ("bootstrap" for the bootstrap token)' })
  actorId!: string;
  @ApiProperty({
    type: AuditActorView,
    nullable: true,
    description: 'Who made the change: the token and its person (null on rows written before it was recorded)',
  })
  actor!: AuditActorView | null;
  @ApiProperty({ example: 'key.created' }) action!: string;
  @ApiProperty({ example: 'virtual-key' }) targetType!: string;
  @ApiProperty({ nullable: true, type: String }) targetId!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'team web, monthly',
    description: 'The target as people name it (its name now, else as recorded when it was deleted)',
  })
  targetName!: string | null;
  @ApiProperty({ type: [AuditFieldChangeView], description: 'What changed, field by field, before and after' })
  changes!: AuditFieldChangeView[];
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'What changed; never secrets' })
  details!: unknown;
  @ApiProperty() createdAt!: Date;
}

export function toAuditEventView(e: DescribedAuditEvent): AuditEventView {
  const actor = (e.actor ?? null) as AdminActor | null;
  return {
    id: e.id,
    orgId: e.orgId,
    actorId: e.actorId,
    actor,
    action: e.action,
    targetType: e.targetType,
    targetId: e.targetId,
    targetName: e.targetName,
    changes: e.changes,
    details: e.details,
    createdAt: e.createdAt,
  };
}

export class AuditPageView {
  @ApiProperty({ type: [AuditEventView], description: 'Latest first' }) events!: AuditEventView[];
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Pass as `cursor` (with the same filters) for the next page; null on the last page',
  })
  nextCursor!: string | null;
}

export class AuditActorFacetView {
  @ApiProperty({ description: 'What the `actor` filter takes: the person’s user id, else the admin token id' })
  id!: string;
  @ApiProperty({ description: 'The token id of the latest row of this actor' }) actorId!: string;
  @ApiProperty({ type: AuditActorView, nullable: true, description: 'As the latest row of this actor names it' })
  actor!: AuditActorView | null;
}

export class AuditFacetsView {
  @ApiProperty({ type: [String], example: ['key.created', 'policy.patched'] }) actions!: string[];
  @ApiProperty({ type: [String], example: ['virtual-key', 'policy'] }) targetTypes!: string[];
  @ApiProperty({ type: [AuditActorFacetView] }) actors!: AuditActorFacetView[];
}
