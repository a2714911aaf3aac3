import { Prisma, PrismaClient } from '@prisma/client';
import { DateTime } from 'luxon';

/** A budget's scope: the org alone, or one team, user or key of it. */
export type SpendScope = 'ORG' | 'TEAM' | 'USER' | 'KEY';

export interface SpendWindow {
  orgId: string;
  scope: SpendScope;
  scopeId: string;
  /** Inclusive; epoch (new Date(0)) for all of history. */
  start: Date;
  /** Exclusive; null for no end. */
  end: Date | null;
}

/**
 * Where a sum came from (tests and logs): the scope's running total (all of history), rollup days,
 * or the ledger's rows when the days do not fit.
 */
export type SpendSource = 'total' | 'rollups' | 'ledger';

/** A client or an interactive transaction: a sum and its checks read one snapshot inside a transaction. */
type Db = Pick<PrismaClient, '$queryRaw'> | Prisma.TransactionClient;

const COLUMN: Record<SpendScope, string> = { ORG: 'orgId', TEAM: 'teamId', USER: 'userId', KEY: 'keyId' };

/**
 * The spend of a scope over a window, exact up to the last written event, at a cost that does not
 * grow with the ledger. All of history (a TOTAL budget) is one row, the scope's running total
 * (`UsageScopeTotal`, kept by the ledger's insert trigger and untouched by retention). Otherwise: the org's key rollup (kept by the ledger's insert trigger, so it holds
 * today's partial day too) over the window's days, plus the closing balance of the months
 * retention dropped when the window starts before them. Rollup days are the org's calendar days
 * in the zone `UsageRollupCoverage` names; a window that does not start and end on midnights of
 * that zone (a budget period still on a previous zone's calendar, or rollups void after a zone
 * change) sums the ledger's rows of the window instead.
 */
export async function ledgerSpend(db: Db, w: SpendWindow): Promise<{ micros: bigint; source: SpendSource }> {
  const column = Prisma.raw(`"${COLUMN[w.scope]}"`);
  const allTime = w.start.getTime() <= 0;
  if (allTime && w.end === null) {
    const [total] = await db.$queryRaw<{ s: bigint }[]>`
      SELECT "costMicros" AS s FROM "UsageScopeTotal"
      WHERE "orgId" = ${w.orgId}::uuid AND "scope" = ${w.scope}::"BudgetScope" AND "scopeId" = ${w.scopeId}::uuid`;
    return { micros: total?.s ?? 0n, source: 'total' };
  }
  const [info] = await db.$queryRaw<{ zone: string | null; covered: boolean; droppedFrom: Date | null }[]>`
    SELECT c."timeZone" AS zone,
           c."orgId" IS NOT NULL AND c."timeZone" IS NOT DISTINCT FROM COALESCE(o."timeZone", 'UTC') AS covered,
           (SELECT min(r."rangeStart") FROM "UsageLedgerRetention" r) AS "droppedFrom"
    FROM (SELECT 1) AS one
    LEFT JOIN "UsageRollupCoverage" c ON c."orgId" = ${w.orgId}::uuid
    LEFT JOIN "Organization" o ON o."id" = ${w.orgId}::uuid`;
  // The closing balance holds every dropped month: it belongs to a window that starts before them.
  const withClosing = info.droppedFrom !== null && w.start.getTime() <= info.droppedFrom.getTime();
  let closing = 0n;
  if (withClosing) {
    const [row] = await db.$queryRaw<{ s: bigint }[]>`
      SELECT COALESCE(sum("costMicros"), 0)::bigint AS s FROM "UsageLedgerClosing"
      WHERE "orgId" = ${w.orgId}::uuid AND ${column} = ${w.scopeId}::uuid`;
    closing = row.s;
  }
  const zone = info.covered ? info.zone : null;
  if (zone && (allTime || isMidnight(w.start, zone)) && (w.end === null || isMidnight(w.end, zone))) {
    const from = allTime ? null : localDay(w.start, zone);
    const to = w.end === null ? null : localDay(w.end, zone);
    const [row] = await db.$queryRaw<{ s: bigint }[]>`
      SELECT COALESCE(sum(r."costMicros"), 0)::bigint AS s FROM "UsageKeyDayRollup" r
      WHERE r."orgId" = ${w.orgId}::uuid AND r.${column} = ${w.scopeId}::uuid
        AND (${from}::date IS NULL OR r."day" >= ${from}::date) AND (${to}::date IS NULL OR r."day" < ${to}::date)`;
    return { micros: closing + row.s, source: 'rollups' };
  }
  const [row] = await db.$queryRaw<{ s: bigint }[]>`
    SELECT COALESCE(sum(e."costMicros"), 0)::bigint AS s FROM "UsageEvent" e
    WHERE e."orgId" = ${w.orgId}::uuid AND e.${column} = ${w.scopeId}::uuid
      AND e."occurredAt" >= ${iso(w.start)}::timestamp AND (${w.end ? iso(w.end) : null}::timestamp IS NULL OR e."occurredAt" < ${w.end ? iso(w.end) : null}::timestamp)`;
  return { micros: closing + row.s, source: 'ledger' };
}

function isMidnight(at: Date, zone: string): boolean {
  const local = DateTime.fromJSDate(at, { zone });
  return local.isValid && local.startOf('day').toMillis() === at.getTime();
}

function localDay(at: Date, zone: string): string {
  return DateTime.fromJSDate(at, { zone }).toISODate()!;
}

/** The ledger's timestamps are UTC without a zone. */
function iso(at: Date): string {
  return at.toISOString().replace('T', ' ').replace('Z', '');
}
