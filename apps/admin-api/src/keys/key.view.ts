import { ApiProperty } from '@nestjs/swagger';
import type { VirtualKeyView } from '@tollgate/identity';
import { BudgetView } from '../budgets/budget.view';
import { RateLimitView } from '../rate-limits/rate-limit.view';
import { DISCLOSURE_MODES } from '@tollgate/kernel';

/** A virtual key as listed: never the secret, never its hash. */
export class KeyView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) orgId!: string;
  @ApiProperty({ format: 'uuid' }) teamId!: string;
  @ApiProperty({ format: 'uuid' }) userId!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ example: 'tg_Ab3dE9Q', description: 'The visible start of the secret' }) prefix!: string;
  @ApiProperty({
    enum: ['STATIC', 'OAUTH'],
    description: 'STATIC: a secret sent as a bearer header; OAUTH: what a user authorised an OAuth client to do',
  })
  kind!: 'STATIC' | 'OAUTH';
  @ApiProperty({ nullable: true, type: String, description: 'For OAUTH keys: the client the user authorised' })
  oauthClientId!: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'For OAUTH keys: the client name shown at consent' })
  oauthClientName!: string | null;
  @ApiProperty({ enum: DISCLOSURE_MODES, nullable: true }) disclosureMode!: string | null;
  @ApiProperty({ type: [String], description: 'Tags reports group and filter by' }) tags!: string[];
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Free-form metadata' }) metadata!: Record<
    string,
    unknown
  >;
  @ApiProperty({ nullable: true, type: Date }) expiresAt!: Date | null;
  @ApiProperty({ nullable: true, type: Date }) revokedAt!: Date | null;
  @ApiProperty({ nullable: true, type: Date }) lastUsedAt!: Date | null;
  @ApiProperty() createdAt!: Date;
}

export class NamedIdView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() name!: string;
}

/** One page of the key list, with what a list screen needs beside it. */
export class KeyPageView {
  @ApiProperty({ type: [KeyView] }) keys!: KeyView[];
  @ApiProperty({ description: 'Keys that match, over every page' }) total!: number;
  @ApiProperty() offset!: number;
  @ApiProperty() limit!: number;
  @ApiProperty({ type: [String], description: 'Every tag of the keys within the caller’s reach' }) tags!: string[];
  @ApiProperty({ type: [NamedIdView], description: 'The names of this page’s teams and owners' })
  names!: NamedIdView[];
}

export class IssuedKeyView {
  @ApiProperty({ type: KeyView }) key!: KeyView;
  @ApiProperty({ example: 'tg_…', description: 'The whole key. Shown once: store it now, it cannot be read again.' })
  secret!: string;
}

export function toKeyView(k: VirtualKeyView): KeyView {
  return {
    id: k.id,
    orgId: k.orgId,
    teamId: k.teamId,
    userId: k.userId,
    name: k.name,
    prefix: k.prefix,
    kind: k.kind,
    oauthClientId: k.oauthClientId,
    oauthClientName: k.oauthClientName,
    disclosureMode: k.disclosureMode,
    tags: k.tags,
    metadata: (k.metadata ?? {}) as Record<string, unknown>,
    expiresAt: k.expiresAt,
    revokedAt: k.revokedAt,
    lastUsedAt: k.lastUsedAt,
    createdAt: k.createdAt,
  };
}

export class KeyLimitsView {
  @ApiProperty({ format: 'uuid' }) keyId!: string;
  @ApiProperty({ type: [BudgetView] }) budgets!: BudgetView[];
  @ApiProperty({ type: [RateLimitView] }) rateLimits!: RateLimitView[];
}
