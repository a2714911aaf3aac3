import { Injectable } from '@nestjs/common';
import { AuditEntry, recordAudit, targetTypeFilter } from '@tollgate/audit';
import { AuditEvent, Prisma, PrismaService } from '@tollgate/db';
import { AdminActor, AdminPrincipal, auditBy } from '@tollgate/identity';
import { DateTime } from 'luxon';
import { FieldValidationException } from '../common/errors/field-validation.exception';
import { FieldChange, fieldChanges } from './audit-changes';
import { decodeAuditCursor, encodeAuditCursor } from './audit-cursor';
import { recordedName, targetNames } from './audit-target-names';

export const MAX_AUDIT_PAGE = 500;
export const DEFAULT_AUDIT_PAGE = 50;

/** What to look for in an org's trail (the query's fields, already shape-checked); every filter given must match. */
export interface AuditSearch {
  /** Comma-separated actions, exact or a prefix ending in `*`. */
  action?: string;
  /** A person's user id or an admin token id. */
  actor?: string;
  targetType?: string;
  targetId?: string;
  /** Calendar days `YYYY-MM-DD` in the org's time zone, both inclusive. */
  from?: string;
  to?: string;
  limit?: number;
  /** Where the previous page ended (`nextCursor`). */
  cursor?: string;
}

/** An audit row as the log shows it: its target by name, and what changed, before and after. */
export interface DescribedAuditEvent extends AuditEvent {
  /** The target's name now, else the one its details recorded (a target deleted since); null: unnamed. */
  targetName: string | null;
  changes: FieldChange[];
}

export interface AuditPage {
  events: DescribedAuditEvent[];
  /** Null on the last page. */
  nextCursor: string | null;
}

/** An actor found in an org's trail: `id` is what the `actor` filter takes (the person, else the token). */
export interface AuditActorFacet {
  id: string;
  actor: AdminActor | null;
  actorId: string;
}

export interface AuditFacets {
  actions: string[];
  targetTypes: string[];
  actors: AuditActorFacet[];
}

/** The audit trail: one row per admin change, who (the token and its person, as they were) and what. */
@Injectable()
export class AuditService {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Writes a row on its own, after the change and outside its transaction: what routes not yet moved
   * to a lib method taking `AuditedBy` still do (see docs/architecture.md, the admin API's layers).
   */
  async record(actor: AdminPrincipal, entry: AuditEntry): Promise<void> {
    await recordAudit(this.prisma, auditBy(actor), entry);
  }

  /**
   * One page of the org's trail, latest first, and the cursor of the next. Keyset paging on
   * (createdAt, id): rows written meanwhile never shift a page, so a walk sees each row once.
   * SQL rather than Prisma's filters, so each filter hits its index (see the AuditEvent model).
   */
  async search(orgId: string, search: AuditSearch): Promise<AuditPage> {
    const limit = Math.min(Math.max(search.limit ?? DEFAULT_AUDIT_PAGE, 1), MAX_AUDIT_PAGE);
    const where: Prisma.Sql[] = [Prisma.sql`"orgId" = ${orgId}::uuid`];
    if (search.action) {
      const actions = actionCondition(search.action);
      if (actions) where.push(actions);
    }
    // A person is found under every token naming them; a token id finds that token's rows.
    if (search.actor) where.push(Prisma.sql`(${WHO} = ${search.actor} OR "actorId" = ${search.actor})`);
    if (search.targetType) where.push(Prisma.sql`"targetType" = ${targetTypeFilter(search.targetType)}`);
    if (search.targetId) where.push(Prisma.sql`"targetId" = ${search.targetId}`);
    if (search.from || search.to) {
      const { start, end } = await this.dayBounds(orgId, search.from, search.to);
      if (start) where.push(Prisma.sql`"createdAt" >= ${utcTimestamp(start)}`);
      if (end) where.push(Prisma.sql`"createdAt" < ${utcTimestamp(end)}`);
    }
    if (search.cursor) {
      const after = decodeAuditCursor(search.cursor);
      const at = utcTimestamp(after.createdAt);
      // The redundant `<=` lets Postgres start the index scan at the cursor instead of filtering from the top.
      where.push(Prisma.sql`"createdAt" <= ${at} AND ("createdAt", "id") < (${at}, ${after.id}::uuid)`);
    }
    const rows = await this.prisma.$queryRaw<AuditEvent[]>`
      SELECT "id", "orgId", "actorId", "actor", "action", "targetType", "targetId", "details", "createdAt"
      FROM "AuditEvent" WHERE ${Prisma.join(where, ' AND ')}
      ORDER BY "createdAt" DESC, "id" DESC LIMIT ${limit + 1}`;
    const events = rows.slice(0, limit);
    const last = events[events.length - 1];
    return {
      events: await this.describe(orgId, events),
      nextCursor: rows.length > limit && last ? encodeAuditCursor(last) : null,
    };
  }

  /**
   * Names the page's targets and says what each row changed. A row that recorded the target's state is
   * compared with the row before it for the same target: one index probe per row ([orgId, targetId,
   * createdAt]), so a page costs the same however long the trail is.
   */
  private async describe(orgId: string, events: AuditEvent[]): Promise<DescribedAuditEvent[]> {
    const withTarget = events.filter((e) => e.targetId);
    const [names, previous] = await Promise.all([
      targetNames(this.prisma, orgId, events),
      withTarget.length === 0
        ? Promise.resolve([])
        : this.prisma.$queryRaw<{ id: string; details: unknown }[]>`
            SELECT e."id", p."details" FROM "AuditEvent" e
            CROSS JOIN LATERAL (
              SELECT p."details" FROM "AuditEvent" p
              WHERE p."orgId" = ${orgId}::uuid AND p."targetId" = e."targetId" AND p."targetType" = e."targetType"
                AND p."createdAt" <= e."createdAt" AND (p."createdAt", p."id") < (e."createdAt", e."id")
              ORDER BY p."createdAt" DESC, p."id" DESC LIMIT 1) p
            WHERE e."orgId" = ${orgId}::uuid
              AND e."id" IN (${Prisma.join(withTarget.map((e) => Prisma.sql`${e.id}::uuid`))})`,
    ]);
    const before = new Map(previous.map((p) => [p.id, p.details]));
    return events.map((e) => ({
      ...e,
      targetName: (e.targetId && names.get(e.targetId)) || recordedName(e.details),
      changes: fieldChanges(e.action, e.details, before.get(e.id)),
    }));
  }

  /**
   * The actions, target types and actors an org's trail holds, to offer as filters. Each list is a
   * skip scan over its index (one probe per distinct value), not a scan of the org's rows.
   */
  async facets(orgId: string): Promise<AuditFacets> {
    const [actions, targetTypes, actors] = await Promise.all([
      // text_pattern_ops orders by bytes: ~>~ and USING ~<~ are that index's order.
      this.prisma.$queryRaw<{ v: string }[]>`
        WITH RECURSIVE d AS (
          (SELECT "action" AS v FROM "AuditEvent" WHERE "orgId" = ${orgId}::uuid ORDER BY "action" USING ~<~ LIMIT 1)
          UNION ALL
          SELECT (SELECT e."action" FROM "AuditEvent" e WHERE e."orgId" = ${orgId}::uuid AND e."action" ~>~ d.v
                  ORDER BY e."action" USING ~<~ LIMIT 1)
          FROM d WHERE d.v IS NOT NULL)
        SELECT v FROM d WHERE v IS NOT NULL`,
      this.prisma.$queryRaw<{ v: string }[]>`
        WITH RECURSIVE d AS (
          (SELECT "targetType" AS v FROM "AuditEvent" WHERE "orgId" = ${orgId}::uuid ORDER BY "targetType" LIMIT 1)
          UNION ALL
          SELECT (SELECT e."targetType" FROM "AuditEvent" e WHERE e."orgId" = ${orgId}::uuid AND e."targetType" > d.v
                  ORDER BY e."targetType" LIMIT 1)
          FROM d WHERE d.v IS NOT NULL)
        SELECT v FROM d WHERE v IS NOT NULL`,
      // Each person (else token) once, as its latest row names it.
      this.prisma.$queryRaw<AuditActorFacet[]>`
        WITH RECURSIVE d AS (
          (SELECT ${WHO} AS v FROM "AuditEvent" WHERE "orgId" = ${orgId}::uuid ORDER BY 1 LIMIT 1)
          UNION ALL
          SELECT (SELECT ${WHO} FROM "AuditEvent" WHERE "orgId" = ${orgId}::uuid AND ${WHO} > d.v ORDER BY 1 LIMIT 1)
          FROM d WHERE d.v IS NOT NULL)
        SELECT d.v AS "id", l."actor", l."actorId" FROM d CROSS JOIN LATERAL (
          SELECT "actor", "actorId" FROM "AuditEvent" WHERE "orgId" = ${orgId}::uuid AND ${WHO} = d.v
          ORDER BY "createdAt" DESC LIMIT 1) l
        WHERE d.v IS NOT NULL`,
    ]);
    return {
      actions: actions.map((a) => a.v).sort(),
      targetTypes: targetTypes.map((t) => t.v).sort(),
      actors,
    };
  }

  /** `[start, end)` of the org's calendar days `from`..`to` (either may be open), as the reports count days. */
  private async dayBounds(orgId: string, from?: string, to?: string): Promise<{ start?: Date; end?: Date }> {
    // A deleted org's trail is kept (no foreign key): its days are then UTC days.
    const org = await this.prisma.organization.findUnique({ where: { id: orgId }, select: { timeZone: true } });
    const zone = org?.timeZone ?? 'UTC';
    const start = from ? localMidnight(from, zone, 'from') : undefined;
    const last = to ? localMidnight(to, zone, 'to') : undefined;
    if (start && last && last < start) throw new FieldValidationException('to', ['to must not be before from']);
    const next = last ? DateTime.fromJSDate(last, { zone }).plus({ days: 1 }) : null;
    // Postgres cannot take the day after 9999-12-31 (`+010000-…`): `to` is then open-ended, as no row is that late.
    const end = next && next.year <= LAST_YEAR ? localMidnight(next.toISODate() ?? '', zone, 'to') : undefined;
    return { start, end };
  }
}

/** Who acted: the person the token named, else the token; the expression of its index. */
const WHO = Prisma.raw(`COALESCE("actor"->'user'->>'id', "actorId")`);

/** `createdAt` is a timestamp without zone holding UTC: compare it with the instant's UTC wall time. */
function utcTimestamp(at: Date): Prisma.Sql {
  return Prisma.sql`(${at.toISOString()}::timestamptz AT TIME ZONE 'UTC')`;
}

// Days the trail can be searched by: nothing was recorded before 1970, and Postgres has no year 0 nor, as an
// ISO string, any year past 9999 (either would reach it as a 500).
const FIRST_YEAR = 1970;
const LAST_YEAR = 9999;

/**
 * The start of calendar day `day` in `zone`; a day that does not exist (`2026-02-30`) or lies outside
 * 1970..9999 is a 400 naming `field`.
 */
function localMidnight(day: string, zone: string, field: string): Date {
  const local = DateTime.fromISO(day, { zone });
  if (!local.isValid || local.toISODate() !== day) {
    throw new FieldValidationException(field, [`${field} must be a real date YYYY-MM-DD`]);
  }
  if (local.year < FIRST_YEAR || local.year > LAST_YEAR) {
    throw new FieldValidationException(field, [
      `${field} must be a day from ${FIRST_YEAR}-01-01 to ${LAST_YEAR}-12-31`,
    ]);
  }
  return local.startOf('day').toJSDate();
}

/** `key.*,policy.patched` as a condition on `action`; null when `*` lets everything through. */
function actionCondition(list: string): Prisma.Sql | null {
  const items = [...new Set(list.split(','))];
  if (items.includes('*')) return null;
  const exact = items.filter((a) => !a.endsWith('*'));
  // `_` is a LIKE wildcard and may appear in an action; the validated list holds no `%` or `\`.
  const prefixes = items.filter((a) => a.endsWith('*')).map((a) => `${a.slice(0, -1).replace(/_/g, '\\_')}%`);
  const any = [
    ...(exact.length > 0 ? [Prisma.sql`"action" IN (${Prisma.join(exact)})`] : []),
    ...prefixes.map((pattern) => Prisma.sql`"action" LIKE ${pattern}`),
  ];
  return Prisma.sql`(${Prisma.join(any, ' OR ')})`;
}
