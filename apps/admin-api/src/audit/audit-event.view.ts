import { ApiProperty } from '@nestjs/swagger';
import type { AuditEvent } from '@tollgate/db';

export class AuditEventView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) orgId!: string | null;
  @ApiProperty({ description: 'The admin token id that made the change ("bootstrap" for the bootstrap token)' }) actorId!: string;
  @ApiProperty({ example: 'key.created' }) action!: string;
  @ApiProperty({ example: 'virtual-key' }) targetType!: string;
  @ApiProperty({ nullable: true, type: String }) targetId!: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'What changed; never secrets' }) details!: unknown;
  @ApiProperty() createdAt!: Date;
}

export function toAuditEventView(e: AuditEvent): AuditEventView {
  return { id: e.id, orgId: e.orgId, actorId: e.actorId, action: e.action, targetType: e.targetType, targetId: e.targetId, details: e.details, createdAt: e.createdAt };
}
