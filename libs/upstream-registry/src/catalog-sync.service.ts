import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { Prisma, PrismaService } from '@tollgate/db';
import { ORG_CONFIG_CHANGED_CHANNEL, RedisService } from '@tollgate/redis';
import {
  UPSTREAM_CLIENT_CAPABILITIES,
  UpstreamConnection,
  UpstreamSpec,
  connectUpstreamOfEitherRevision,
} from '@tollgate/mcp-client';
import { CatalogException, CatalogExceptionCode } from './catalog.exception';
import {
  EntrySyncReport,
  ListedEntries,
  ListingClient,
  listCatalogEntries,
  reconcileCatalogEntries,
} from './catalog-entry-sync';
import { syncErrorMessage } from './sync-error';
import { LENIENT_TOOLS_PAGE, normalizeListedTool } from './listed-tool';
import { ToolDefinition, definitionHash, normalizeToolDefinition, taskSupportOf } from './tool-definition';
import { TOOL_PROFILER, ToolProfileColumns, ToolProfiler, profileColumns, profiledHash } from './tool-profiler';
import { UpstreamRegistry } from './upstream-registry.service';
import { UPSTREAM_SYNC_AUTH, UpstreamSyncAuth } from './upstream-sync-auth';

export interface SyncReport {
  upstreamId: string;
  total: number;
  added: number;
  changed: number;
  removed: number;
  unchanged: number;
  heldForReview: number;
  /** Fields (or whole tools) dropped because the upstream sent them invalid; also kept on the upstream. */
  warnings: string[];
  /** The upstream's resources, resource templates and prompts, reconciled like its tools. */
  entries: EntrySyncReport; /** The sync did not run: the upstream is disabled, or its sync is paused. */
  skipped?: boolean;
}

interface ListedTools {
  tools: Tool[];
  warnings: string[];
  entries: ListedEntries;
  /** The revision the catalog was read in: the newest the upstream offers, which the edge then speaks. */
  protocolRevision: string;
}

// A misbehaving upstream must not make the worker page forever.
const MAX_LIST_PAGES = 1000;
// Kept on the upstream row: enough to show an admin what is wrong without storing a whole catalog.
const MAX_STORED_WARNINGS = 50;

/**
 * Lists an upstream's tools (every page) and reconciles the catalog: new and changed definitions
 * are pinned at once if the organisation auto-approves, else held for review while the edge keeps
 * serving the pinned version; tools the upstream no longer lists are marked removed.
 */
@Injectable()
export class CatalogSyncService {
  private readonly logger = new Logger(CatalogSyncService.name);

  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
    private readonly registry: UpstreamRegistry,
    @Inject(TOLLGATE_CONFIG) private readonly config: BaseConfig,
    @Optional() @Inject(UPSTREAM_SYNC_AUTH) private readonly syncAuth?: UpstreamSyncAuth,
    @Optional() @Inject(TOOL_PROFILER) private readonly profiler?: ToolProfiler,
  ) {}

  /** `signal`: the sync is given up (the worker is shutting down): the upstream's state is left as it was. */
  async syncUpstream(orgId: string, upstreamId: string, trigger?: string, signal?: AbortSignal): Promise<SyncReport> {
    const upstream = await this.registry.getUpstream(orgId, upstreamId);
    // A disabled upstream is not read; a paused one only when an admin asks for a sync.
    if (!upstream.enabled || (upstream.syncPaused && trigger !== 'admin')) {
      this.logger.log(
        `skipped ${trigger ?? ''} sync of ${upstream.namespace}: ${upstream.enabled ? 'sync paused' : 'upstream disabled'}`,
      );
      return {
        upstreamId: upstream.id,
        total: 0,
        added: 0,
        changed: 0,
        removed: 0,
        unchanged: 0,
        heldForReview: 0,
        warnings: [],
        entries: { added: 0, changed: 0, removed: 0, unchanged: 0, heldForReview: 0 },
        skipped: true,
      };
    }
    let listed: ListedTools;
    try {
      listed = await this.listAllTools(await this.syncSpecOf(upstream), signal);
    } catch (err) {
      signal?.throwIfAborted();
      // Members read lastSyncError: a classified reason only, never the text the upstream answered.
      const message = syncErrorMessage(err);
      await this.prisma.upstreamServer.update({
        where: { id: upstream.id },
        data: { lastSyncError: message.slice(0, 1000) },
      });
      const failed = new CatalogException(
        CatalogExceptionCode.SyncFailed,
        `sync of ${upstream.namespace} failed: ${message}`,
      );
      // The worker reads the cause to tell a refusal no retry can change from a transient failure.
      failed.cause = err;
      throw failed;
    }
    const org = await this.prisma.organization.findUniqueOrThrow({ where: { id: orgId } });
    const report = await this.prisma.$transaction(
      (tx) =>
        this.reconcile(
          tx,
          orgId,
          upstream.id,
          listed,
          upstream.autoApproveTools ?? org.autoApproveTools,
          upstream.namespace,
        ),
      { timeout: 60_000 },
    );
    await this.redis.publish(ORG_CONFIG_CHANGED_CHANNEL, orgId);
    if (listed.warnings.length > 0) {
      const { warnings } = report;
      this.logger.warn({
        message: 'sync kept tools but dropped invalid fields',
        orgId,
        upstreamId: upstream.id,
        namespace: upstream.namespace,
        count: listed.warnings.length,
        warnings,
      });
    }
    this.logger.log(`synced ${upstream.namespace}: ${JSON.stringify(report)}`);
    return report;
  }

  /** A per-user OAuth upstream lists its tools only to a user: sync with a connected user's token. */
  private async syncSpecOf(upstream: Parameters<UpstreamRegistry['specOf']>[0]): Promise<UpstreamSpec> {
    const spec = this.registry.specOf(upstream);
    if (spec.authMode !== 'PER_USER_OAUTH') return spec;
    const headers = this.syncAuth ? await this.syncAuth.headersForSync(upstream.orgId, upstream.id) : null;
    if (!headers)
      throw new CatalogException(
        CatalogExceptionCode.SyncFailed,
        'no user has connected an account yet (per-user OAuth): the catalog is read once someone connects',
      );
    return { ...spec, headers: { ...spec.headers, ...headers } };
  }

  private async listAllTools(spec: UpstreamSpec, signal?: AbortSignal): Promise<ListedTools> {
    // Tools an upstream shows only to clients that can answer sampling or elicitation are catalogued too.
    // The newest revision it offers is negotiated anew each sync (an upstream may list more on its
    // 2026-07-28 path than in a 2025-11-25 session): the catalog is what the edge will be served.
    const connection = await connectUpstreamOfEitherRevision(spec, {
      timeoutMs: Math.max(spec.callTimeoutMs, 30_000),
      capabilities: UPSTREAM_CLIENT_CAPABILITIES,
      renegotiate: true,
      signal,
    });
    const client: ListingClient = connection.client;
    try {
      const listed: ListedTools = {
        tools: [],
        warnings: [],
        entries: {},
        protocolRevision: connection.protocolVersion,
      };
      let index = 0;
      let cursor: string | undefined;
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        // Not client.listTools(): its strict result schema fails the whole page for one sloppy field.
        const params = cursor ? { cursor } : undefined;
        const res = await client.request({ method: 'tools/list', params }, LENIENT_TOOLS_PAGE, {
          timeout: Math.max(spec.callTimeoutMs, 30_000),
          signal,
        });
        res.tools.forEach((raw) => {
          const { tool, warnings } = normalizeListedTool(raw, index++);
          if (tool) listed.tools.push(tool);
          listed.warnings.push(...warnings);
        });
        if (res.nextCursor !== undefined && res.nextCursor !== null && typeof res.nextCursor !== 'string') {
          listed.warnings.push(`tools/list nextCursor is not a string: listing stopped after page ${page + 1}`);
        }
        cursor = typeof res.nextCursor === 'string' && res.nextCursor !== '' ? res.nextCursor : undefined;
        if (!cursor) {
          listed.entries = await listCatalogEntries(
            client,
            Math.max(spec.callTimeoutMs, 30_000),
            listed.warnings,
            signal,
          );
          return listed;
        }
      }
      throw new CatalogException(
        CatalogExceptionCode.SyncFailed,
        `tools/list returned more than ${MAX_LIST_PAGES} pages`,
      );
    } finally {
      await closeSyncSession(connection);
    }
  }

  private async reconcile(
    tx: Prisma.TransactionClient,
    orgId: string,
    upstreamId: string,
    { tools: listed, warnings, entries, protocolRevision }: ListedTools,
    autoApprove: boolean,
    namespace: string,
  ): Promise<SyncReport> {
    // Syncs of one upstream (schedule, admin, list_changed) serialise here instead of racing on inserts.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${upstreamId}))::text`;
    const existing = new Map((await tx.tool.findMany({ where: { orgId, upstreamId } })).map((t) => [t.name, t]));
    const kept =
      warnings.length > MAX_STORED_WARNINGS
        ? [...warnings.slice(0, MAX_STORED_WARNINGS - 1), `and ${warnings.length - MAX_STORED_WARNINGS + 1} more`]
        : warnings;
    const now = new Date();
    const entryReport = await reconcileCatalogEntries(tx, orgId, upstreamId, entries, autoApprove, now);
    const report: SyncReport = {
      upstreamId,
      total: listed.length,
      added: 0,
      changed: 0,
      removed: 0,
      unchanged: 0,
      heldForReview: 0,
      warnings: kept,
      entries: entryReport,
    };
    const seen = new Set<string>();

    for (const tool of listed) {
      if (seen.has(tool.name)) continue;
      seen.add(tool.name);
      const def = normalizeToolDefinition(tool);
      const hash = definitionHash(def);
      const prev = existing.get(tool.name);
      const json = def as unknown as Prisma.InputJsonValue;
      // From the latest listing whatever is pinned: the edge decides a call's path by it.
      const taskSupport = taskSupportOf(tool);

      if (prev && prev.definitionHash === hash) {
        // Rows synced before profiles existed get theirs once (summaryTokens is never 0 after).
        const backfill =
          this.profiler && prev.summaryTokens === 0
            ? this.profileColumns((prev.pinnedDefinition ?? prev.definition) as unknown as ToolDefinition, namespace)
            : null;
        if (prev.removedAt || backfill || prev.taskSupport !== taskSupport)
          await tx.tool.update({ where: { id: prev.id }, data: { removedAt: null, taskSupport, ...backfill } });
        report.unchanged++;
        continue;
      }
      if (!prev) {
        report.added++;
        if (!autoApprove) report.heldForReview++;
        await tx.tool.create({
          data: {
            orgId,
            upstreamId,
            name: tool.name,
            definition: json,
            definitionHash: hash,
            taskSupport,
            pinnedDefinition: autoApprove ? json : Prisma.DbNull,
            pinnedHash: autoApprove ? hash : null,
            reviewStatus: autoApprove ? 'APPROVED' : 'PENDING',
            ...this.profileColumns(def, namespace),
          },
        });
        continue;
      }
      report.changed++;
      // Back to the pinned version: nothing left to review.
      const approved = autoApprove || hash === prev.pinnedHash;
      if (!approved) report.heldForReview++;
      const pinnedHash = approved ? hash : prev.pinnedHash;
      // Token counts and summaries are computed once per definition hash, for the definition the
      // edge serves (the pinned one, else the latest): a change held for review keeps its profile.
      const reprofile =
        profiledHash(prev) !== profiledHash({ pinnedHash, definitionHash: hash }) || prev.summaryTokens === 0;
      const served =
        pinnedHash === null || pinnedHash === hash ? def : (prev.pinnedDefinition as unknown as ToolDefinition);
      await tx.tool.update({
        where: { id: prev.id },
        data: {
          definition: json,
          definitionHash: hash,
          taskSupport,
          removedAt: null,
          ...(reprofile ? this.profileColumns(served, namespace) : {}),
          ...(approved
            ? { pinnedDefinition: json, pinnedHash: hash, reviewStatus: 'APPROVED' }
            : { reviewStatus: 'PENDING' }),
        },
      });
    }

    const gone = [...existing.values()].filter((t) => !seen.has(t.name) && !t.removedAt).map((t) => t.id);
    if (gone.length > 0) {
      await tx.tool.updateMany({ where: { orgId, id: { in: gone } }, data: { removedAt: now } });
      report.removed = gone.length;
    }
    await tx.upstreamServer.update({
      where: { id: upstreamId },
      data: { lastSyncAt: now, lastSyncError: null, lastSyncWarnings: kept, protocolRevision },
    });
    return report;
  }

  /** Schema tokens, and the summary, category and tier tokens when a profiler is bound. */
  private profileColumns(
    def: ToolDefinition,
    namespace: string,
  ): { schemaTokens: number } & Partial<ToolProfileColumns> {
    return profileColumns(def, namespace, this.config.tokens.encoding, this.profiler);
  }
}

/**
 * Ends the sync's upstream session: a Streamable HTTP session is DELETEd (client.close() alone
 * leaves it open on the server until it expires), a stdio process is stopped by close().
 */
async function closeSyncSession(connection: UpstreamConnection): Promise<void> {
  // A 2026-07-28 upstream has no session; over stdio its process is ended.
  if (connection.revision !== 'session') return connection.client.close().catch(() => undefined);
  const client = connection.client;
  const transport = client.transport as { sessionId?: string; terminateSession?: () => Promise<void> } | undefined;
  if (transport?.terminateSession && transport.sessionId) await transport.terminateSession().catch(() => undefined);
  await client.close().catch(() => undefined);
}
