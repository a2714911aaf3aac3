import type { ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { AnySchema, SchemaOutput } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { Prisma } from '@tollgate/db';
import {
  CatalogEntryKind,
  ENTRY_LISTINGS,
  LENIENT_LIST_PAGE,
  ListedEntry,
  entryHash,
  normalizeListedEntry,
} from './listed-entry';

/** What one sync did to the resources, templates and prompts of an upstream. */
export interface EntrySyncReport {
  added: number;
  changed: number;
  removed: number;
  unchanged: number;
  heldForReview: number;
}

/** Per kind, what the upstream listed; a kind it does not serve (or failed to list) is absent and left as it was. */
export type ListedEntries = Partial<Record<CatalogEntryKind, ListedEntry[]>>;

const MAX_ENTRY_PAGES = 1000;

/** What a sync lists with: the SDK client of a session, or the stateless client of a 2026-07-28 upstream. */
export interface ListingClient {
  getServerCapabilities(): ServerCapabilities | undefined;
  request<S extends AnySchema>(
    request: { method: string; params?: Record<string, unknown> },
    schema: S,
    options: { timeout?: number; signal?: AbortSignal },
  ): Promise<SchemaOutput<S>>;
}

/**
 * Lists the resources, templates and prompts an upstream declares (every page). A list that fails
 * is a warning, not a failed sync: tools still sync and that kind keeps what the catalog had.
 */
export async function listCatalogEntries(
  client: ListingClient,
  timeoutMs: number,
  warnings: string[],
  signal?: AbortSignal,
): Promise<ListedEntries> {
  const caps = client.getServerCapabilities() ?? {};
  const out: ListedEntries = {};
  for (const kind of Object.keys(ENTRY_LISTINGS) as CatalogEntryKind[]) {
    const { method, field, capability } = ENTRY_LISTINGS[kind];
    if (!caps[capability]) continue;
    try {
      const listed: ListedEntry[] = [];
      let cursor: string | undefined;
      let index = 0;
      for (let page = 0; ; page++) {
        if (page === MAX_ENTRY_PAGES) throw new Error(`more than ${MAX_ENTRY_PAGES} pages`);
        const res = await client.request({ method, params: cursor ? { cursor } : undefined }, LENIENT_LIST_PAGE, {
          timeout: timeoutMs,
          signal,
        });
        const items = (res as Record<string, unknown>)[field];
        for (const raw of Array.isArray(items) ? items : []) {
          const { entry, warnings: w } = normalizeListedEntry(kind, raw, index++);
          if (entry) listed.push(entry);
          warnings.push(...w);
        }
        cursor = typeof res.nextCursor === 'string' && res.nextCursor !== '' ? res.nextCursor : undefined;
        if (!cursor) break;
      }
      out[kind] = listed;
    } catch (err) {
      // A cancelled sync stops here; only a failed list is a warning.
      signal?.throwIfAborted();
      // A classified reason only: an upstream's error text is not shown to members.
      const code = (err as { code?: unknown }).code;
      warnings.push(
        `${method} failed${typeof code === 'number' ? ` (MCP error ${code})` : ''}: ${field} kept as last synced`,
      );
    }
  }
  return out;
}

/**
 * Reconciles the listed entries with the catalog, the way tools are: new and changed entries are
 * pinned at once when the organisation auto-approves, else held for review while the pinned
 * version stays served; entries no longer listed are marked removed. Runs inside the sync's
 * transaction (under its advisory lock).
 */
export async function reconcileCatalogEntries(
  tx: Prisma.TransactionClient,
  orgId: string,
  upstreamId: string,
  listed: ListedEntries,
  autoApprove: boolean,
  now: Date,
): Promise<EntrySyncReport> {
  const report: EntrySyncReport = { added: 0, changed: 0, removed: 0, unchanged: 0, heldForReview: 0 };
  for (const kind of Object.keys(listed) as CatalogEntryKind[]) {
    const entries = listed[kind]!;
    const existing = new Map(
      (await tx.catalogEntry.findMany({ where: { orgId, upstreamId, kind } })).map((e) => [e.key, e]),
    );
    const seen = new Set<string>();
    for (const entry of entries) {
      if (seen.has(entry.key)) continue;
      seen.add(entry.key);
      const hash = entryHash(entry.definition);
      const json = entry.definition as Prisma.InputJsonObject;
      const prev = existing.get(entry.key);
      if (prev && prev.definitionHash === hash) {
        if (prev.removedAt) await tx.catalogEntry.update({ where: { id: prev.id }, data: { removedAt: null } });
        report.unchanged++;
        continue;
      }
      if (!prev) {
        report.added++;
        if (!autoApprove) report.heldForReview++;
        await tx.catalogEntry.create({
          data: {
            orgId,
            upstreamId,
            kind,
            key: entry.key,
            definition: json,
            definitionHash: hash,
            pinnedDefinition: autoApprove ? json : Prisma.DbNull,
            pinnedHash: autoApprove ? hash : null,
            reviewStatus: autoApprove ? 'APPROVED' : 'PENDING',
          },
        });
        continue;
      }
      report.changed++;
      const approved = autoApprove || hash === prev.pinnedHash;
      if (!approved) report.heldForReview++;
      await tx.catalogEntry.update({
        where: { id: prev.id },
        data: {
          definition: json,
          definitionHash: hash,
          removedAt: null,
          ...(approved
            ? { pinnedDefinition: json, pinnedHash: hash, reviewStatus: 'APPROVED' }
            : { reviewStatus: 'PENDING' }),
        },
      });
    }
    const gone = [...existing.values()].filter((e) => !seen.has(e.key) && !e.removedAt).map((e) => e.id);
    if (gone.length > 0) {
      await tx.catalogEntry.updateMany({ where: { orgId, id: { in: gone } }, data: { removedAt: now } });
      report.removed += gone.length;
    }
  }
  return report;
}
