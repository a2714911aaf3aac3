import { ApiProperty } from '@nestjs/swagger';
import type { Tool, UpstreamServer } from '@tollgate/db';
import { exposedToolName } from '@tollgate/kernel';
import { redactUrl } from '@tollgate/audit';
import { UPSTREAM_TRANSPORTS } from './register-upstream.dto';

/** An upstream as shown to admins: header values and encrypted secrets never leave the server. */
export class UpstreamOAuthView {
  @ApiProperty({ nullable: true, type: String, description: 'The OAuth client id in use (configured or registered)' })
  clientId!: string | null;
  @ApiProperty({ description: 'true: Tollgate registered the client dynamically; false: an admin configured it' })
  registered!: boolean;
  @ApiProperty({ nullable: true, type: String }) scope!: string | null;
}

export class UpstreamView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) orgId!: string;
  @ApiProperty() namespace!: string;
  @ApiProperty({ nullable: true, type: String }) displayName!: string | null;
  @ApiProperty({ enum: UPSTREAM_TRANSPORTS }) transport!: string;
  @ApiProperty({ nullable: true, type: String }) command!: string | null;
  @ApiProperty({ type: [String] }) args!: string[];
  @ApiProperty({ nullable: true, type: String, description: 'A password in the URL is masked' }) url!: string | null;
  @ApiProperty({ type: [String], description: 'Names of the configured extra headers (values are write-only)' })
  headerNames!: string[];
  @ApiProperty({ enum: ['NONE', 'STATIC_SECRET', 'PER_USER_OAUTH'] }) authMode!: string;
  @ApiProperty({
    type: UpstreamOAuthView,
    nullable: true,
    description: 'PER_USER_OAUTH: its client (the client secret is write-only); null for other modes',
  })
  oauth!: UpstreamOAuthView | null;
  @ApiProperty() syncIntervalSeconds!: number;
  @ApiProperty() callTimeoutMs!: number;
  @ApiProperty({ nullable: true, type: Number }) outputTokenCap!: number | null;
  @ApiProperty({ description: 'false: its tools are hidden from every key and calls to them refused' })
  enabled!: boolean;
  @ApiProperty({ description: 'Scheduled and list_changed syncs are skipped until resumed' }) syncPaused!: boolean;
  @ApiProperty({
    nullable: true,
    type: Boolean,
    description: 'Review of new or changed tools for this upstream; null follows the organization',
  })
  autoApproveTools!: boolean | null;
  @ApiProperty({
    description: 'Optimistic concurrency: the ETag of the upstream; send it as If-Match to refuse a stale write (412)',
  })
  version!: number;
  @ApiProperty({ description: 'Tools and prompts reach agents under their own names, without `<namespace>__`' })
  exposeUnprefixed!: boolean;
  @ApiProperty({ nullable: true, type: Date }) lastSyncAt!: Date | null;
  @ApiProperty({ nullable: true, type: String }) lastSyncError!: string | null;
  @ApiProperty({
    type: [String],
    description: 'Invalid fields the last sync dropped from the upstream’s tool definitions (the tools were kept)',
  })
  lastSyncWarnings!: string[];
  @ApiProperty({
    nullable: true,
    type: String,
    example: '2026-07-28',
    description:
      'The MCP revision the last sync negotiated, the newest the upstream offers (`2026-07-28`, or the version a 2025-11-25-or-earlier session agreed on); the edge speaks the same. Null before the first sync',
  })
  protocolRevision!: string | null;
  @ApiProperty() createdAt!: Date;
  @ApiProperty() updatedAt!: Date;
}

export class SyncRequestedView {
  @ApiProperty({ description: 'The catalog-sync job id' }) jobId!: string;
}

export class ToolView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) upstreamId!: string;
  @ApiProperty({ description: 'The tool’s name at the upstream' }) name!: string;
  @ApiProperty({ example: 'github__search_issues', description: 'The name agents see' }) exposedName!: string;
  @ApiProperty({ description: 'SHA-256 of the definition last listed by the upstream' }) definitionHash!: string;
  @ApiProperty({ nullable: true, type: String, description: 'SHA-256 of the approved definition the edge serves' })
  pinnedHash!: string | null;
  @ApiProperty({ enum: ['APPROVED', 'PENDING', 'REJECTED'] }) reviewStatus!: string;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'The description the upstream lists now (may wait for review)',
  })
  description!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description:
      'The description agents get: the pinned (approved) definition’s; null if the tool was never approved or has none',
  })
  servedDescription!: string | null;
  @ApiProperty({ description: 'Tokens the tool costs as a plain tools/list entry' }) schemaTokens!: number;
  @ApiProperty({ enum: ['HOT', 'WARM', 'STANDARD', 'COLD'] }) tier!: string;
  @ApiProperty({ nullable: true, type: String }) category!: string | null;
  @ApiProperty({ nullable: true, type: Date, description: 'Set when the upstream stopped listing the tool' })
  removedAt!: Date | null;
  @ApiProperty() firstSeenAt!: Date;
  @ApiProperty() updatedAt!: Date;
}

export function toUpstreamView(u: UpstreamServer): UpstreamView {
  const settings = (u.settings ?? {}) as {
    headers?: Record<string, unknown>;
    headerNames?: string[];
    oauth?: { clientId?: string; scope?: string; registered?: boolean };
  };
  return {
    id: u.id,
    orgId: u.orgId,
    namespace: u.namespace,
    displayName: u.displayName,
    transport: u.transport,
    command: u.command,
    args: u.args,
    url: redactUrl(u.url),
    headerNames: [...new Set([...(settings.headerNames ?? []), ...Object.keys(settings.headers ?? {})])].sort(),
    authMode: u.authMode,
    oauth:
      u.authMode === 'PER_USER_OAUTH'
        ? {
            clientId: settings.oauth?.clientId ?? null,
            registered: settings.oauth?.registered === true,
            scope: settings.oauth?.scope ?? null,
          }
        : null,
    syncIntervalSeconds: u.syncIntervalSeconds,
    callTimeoutMs: u.callTimeoutMs,
    outputTokenCap: u.outputTokenCap,
    exposeUnprefixed: u.exposeUnprefixed,
    enabled: u.enabled,
    syncPaused: u.syncPaused,
    autoApproveTools: u.autoApproveTools,
    version: u.version,
    lastSyncAt: u.lastSyncAt,
    lastSyncError: u.lastSyncError,
    lastSyncWarnings: u.lastSyncWarnings,
    protocolRevision: u.protocolRevision,
    createdAt: u.createdAt,
    updatedAt: u.updatedAt,
  };
}

export function toToolView(namespace: string, t: Tool): ToolView {
  const def = (t.definition ?? {}) as { description?: unknown };
  const pinned = (t.pinnedHash ? (t.pinnedDefinition ?? {}) : {}) as { description?: unknown };
  return {
    id: t.id,
    upstreamId: t.upstreamId,
    name: t.name,
    exposedName: exposedToolName({ namespace, tool: t.name }),
    definitionHash: t.definitionHash,
    pinnedHash: t.pinnedHash,
    reviewStatus: t.reviewStatus,
    description: typeof def.description === 'string' ? def.description : null,
    servedDescription: typeof pinned.description === 'string' ? pinned.description : null,
    schemaTokens: t.schemaTokens,
    tier: t.tier,
    category: t.category,
    removedAt: t.removedAt,
    firstSeenAt: t.firstSeenAt,
    updatedAt: t.updatedAt,
  };
}
