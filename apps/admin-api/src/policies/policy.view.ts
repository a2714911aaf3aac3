import { ApiProperty } from '@nestjs/swagger';
import type { AccessPolicy } from '@tollgate/db';

export const POLICY_SCOPES = { ORG: 'ORG', TEAM: 'TEAM', USER: 'USER', KEY: 'KEY' } as const;

export class PolicyView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) orgId!: string;
  @ApiProperty({ enum: Object.values(POLICY_SCOPES) }) scope!: string;
  @ApiProperty({ format: 'uuid', description: 'The org, team, user or key id' }) scopeId!: string;
  @ApiProperty({
    description: 'Optimistic concurrency: the ETag of the policy; send it as If-Match to refuse a stale write (412)',
  })
  version!: number;
  @ApiProperty({ type: [String] }) allow!: string[];
  @ApiProperty({ type: [String] }) deny!: string[];
  @ApiProperty({ type: [String] }) autoExecute!: string[];
  @ApiProperty({ type: [String] }) resourceAllow!: string[];
  @ApiProperty({ type: [String] }) resourceDeny!: string[];
  @ApiProperty({ type: [String] }) promptAllow!: string[];
  @ApiProperty({ type: [String] }) promptDeny!: string[];
  @ApiProperty({ nullable: true, enum: ['FULL', 'PROGRESSIVE', 'CODE', 'AUTO'] }) disclosureMode!: string | null;
  @ApiProperty({ nullable: true, type: Number }) maxAnswerTokens!: number | null;
  @ApiProperty({ nullable: true, type: Number }) maxSessionSchemaTokens!: number | null;
  @ApiProperty({ nullable: true, type: Number }) outputTokenCap!: number | null;
  @ApiProperty({ nullable: true, enum: ['PAGE', 'REFUSE'] }) outputOverflow!: string | null;
  @ApiProperty() createdAt!: Date;
  @ApiProperty() updatedAt!: Date;
}

export function toPolicyView(p: AccessPolicy): PolicyView {
  return {
    id: p.id,
    orgId: p.orgId,
    scope: p.scope,
    scopeId: p.scopeId,
    version: p.version,
    allow: p.allow,
    deny: p.deny,
    autoExecute: p.autoExecute,
    resourceAllow: p.resourceAllow,
    resourceDeny: p.resourceDeny,
    promptAllow: p.promptAllow,
    promptDeny: p.promptDeny,
    disclosureMode: p.disclosureMode,
    maxAnswerTokens: p.maxAnswerTokens,
    maxSessionSchemaTokens: p.maxSessionSchemaTokens,
    outputTokenCap: p.outputTokenCap,
    outputOverflow: p.outputOverflow,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
  };
}
