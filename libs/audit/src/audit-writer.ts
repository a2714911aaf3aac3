import { Logger } from '@nestjs/common';
import type { Prisma } from '@tollgate/db';
import type { AuditBy } from './audit-actor';
import { scrubAuditDetails } from './audit-details';
import type { AuditAction, AuditTargetType } from './audit-vocabulary';

/** One row of the trail: what changed, in which organisation. */
export interface AuditEntry {
  /** The organisation the change belongs to; null for platform-level changes. */
  orgId: string | null;
  action: AuditAction;
  targetType: AuditTargetType;
  targetId?: string | null;
  /** What changed, without secrets (scrubbed again before writing). */
  details?: Record<string, unknown>;
}

/**
 * How a lib records a change it makes: who made it, and the entry describing its result. The lib
 * writes the entry inside the change's own transaction, so a change never commits without its row.
 */
export interface AuditedBy<T> {
  by: AuditBy;
  entry: (result: T) => AuditEntry;
}

/** Where rows are written: the change's transaction (or the client, for a row that is the change). */
export type AuditClient = Pick<Prisma.TransactionClient, 'auditEvent'>;

const logger = new Logger('Audit');

/** Writes the trail's rows for `entries`, all by `by`, with `tx` (the change's transaction). */
export async function recordAudit(tx: AuditClient, by: AuditBy, ...entries: AuditEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await tx.auditEvent.createMany({
    data: entries.map((entry) => ({
      orgId: entry.orgId,
      actorId: by.actorId,
      actor: (by.actor ?? undefined) as Prisma.InputJsonObject | undefined,
      action: entry.action,
      targetType: entry.targetType,
      targetId: entry.targetId ?? null,
      details: scrubAuditDetails(entry.details ?? {}) as Prisma.InputJsonValue,
    })),
  });
  for (const entry of entries)
    logger.log(
      `audit action=${entry.action} org=${entry.orgId ?? '-'} target=${entry.targetType}:${entry.targetId ?? '-'} actor=${by.actorId}`,
    );
}

/** Records `audited`'s entry for the change's `result`, in the change's transaction `tx`. */
export function recordAudited<T>(tx: AuditClient, audited: AuditedBy<T>, result: T): Promise<void> {
  return recordAudit(tx, audited.by, audited.entry(result));
}
