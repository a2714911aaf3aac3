import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { microsToJson } from '@tollgate/kernel';
import {
  BudgetUtilisation,
  PagedSpendReport,
  PLATFORM_REPORT_DIMENSIONS,
  PlatformSpendReport,
  REPORT_DIMENSIONS,
  SpendFigures,
  SpendReport,
} from '@tollgate/reporting';

export class SpendFiguresView {
  @ApiProperty({ type: 'integer' }) calls!: number;
  @ApiProperty({ type: 'integer', description: 'Calls whose outcome was not OK' }) errors!: number;
  @ApiProperty({ type: 'integer' }) outputTokens!: number;
  @ApiProperty({ type: 'integer', description: 'Integer micro-units' }) costMicros!: number;
}

export class SpendRemainderView extends SpendFiguresView {
  @ApiProperty({ type: 'integer', description: 'Rows of the report left out (the cheapest)' }) rows!: number;
}

export class SpendFiltersView {
  @ApiProperty({ type: [String], description: 'Team ids (UUIDs); empty: not filtered' }) teamId!: string[];
  @ApiProperty({ type: [String], description: 'User ids (UUIDs); empty: not filtered' }) userId!: string[];
  @ApiProperty({ type: [String], description: 'Key ids (UUIDs); empty: not filtered' }) keyId!: string[];
  @ApiProperty({ type: [String], description: 'Upstream server ids (UUIDs); empty: not filtered' })
  upstreamId!: string[];
  @ApiProperty({ type: [String], description: 'Tool names; empty: not filtered' }) tool!: string[];
  @ApiProperty({ nullable: true, type: String, description: 'Key tag; null: not filtered' }) tag!: string | null;
}

export class ReportScopeView {
  @ApiProperty({
    enum: ['org', 'team', 'user'],
    description: 'org: org admins, finance, platform admins; team: a team admin (its team); user: a member (own calls)',
  })
  kind!: 'org' | 'team' | 'user';
  @ApiProperty({ nullable: true, type: String, format: 'uuid', description: 'The team or user; null for org' })
  id!: string | null;
}

export class SubtotalLineView {
  @ApiProperty({
    type: 'integer',
    description:
      'Index in `rows` of the row this subtotal follows; -1: before the first (its rows were on the page before)',
  })
  afterRow!: number;
  @ApiProperty({ description: 'The first breakdown’s value, by name' }) group!: string;
  @ApiProperty({ type: 'integer', description: 'Rows in the group (on every page)' }) rows!: number;
  @ApiProperty({ type: SpendFiguresView }) figures!: SpendFiguresView;
}

export class SpendReportPageView {
  @ApiProperty({ type: 'integer' }) offset!: number;
  @ApiProperty({ type: 'integer' }) limit!: number;
  @ApiProperty({ type: 'integer', description: 'Lines of the whole table: rows and subtotal lines' })
  totalLines!: number;
  @ApiProperty({ type: 'integer', description: 'Rows of the whole report' }) totalRows!: number;
  @ApiProperty({ type: [SubtotalLineView] }) subtotals!: SubtotalLineView[];
}

export class PerDayPointView {
  @ApiProperty({ example: '2026-11-02' }) day!: string;
  @ApiProperty({ type: 'integer', isArray: true, description: 'Micro-units per series, in the order of `series`' })
  costMicros!: number[];
}

export class PerDaySeriesView {
  @ApiProperty({ enum: REPORT_DIMENSIONS, nullable: true, type: String }) stackBy!: string | null;
  @ApiProperty({ type: [String], description: 'Series by name, biggest first; the rest summed as "Other"' })
  series!: string[];
  @ApiProperty({ type: [PerDayPointView], description: 'Every day of the range' }) days!: PerDayPointView[];
}

export class SpendReportView {
  @ApiProperty({ format: 'uuid' }) orgId!: string;
  @ApiProperty({ example: '2026-11-01' }) from!: string;
  @ApiProperty({ example: '2026-11-30' }) to!: string;
  @ApiProperty({
    example: 'Europe/Paris',
    description: 'The organization’s time zone: from, to and day are its calendar days',
  })
  timeZone!: string;
  @ApiProperty({ example: 'EUR', description: 'ISO 4217 code of the organization: the unit of every costMicros' })
  currency!: string;
  @ApiProperty({ nullable: true, type: String, description: 'The tag filter, when one was asked for' }) tag!:
    string | null;
  @ApiProperty({
    type: SpendFiltersView,
    description: 'Every filter applied (AND; the values of one filter OR), those forced by the caller’s role included',
  })
  filters!: SpendFiltersView;
  @ApiProperty({ type: ReportScopeView, description: 'Whose calls the caller may see' }) scope!: ReportScopeView;
  @ApiProperty({ enum: REPORT_DIMENSIONS, isArray: true }) groupBy!: string[];
  @ApiProperty({ type: [String], description: 'Columns of each row, as in the CSV header' }) columns!: string[];
  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description: 'Dimension columns (ids and names) and the figures; ordered by the dimensions',
  })
  rows!: Record<string, string | number | null>[];
  @ApiProperty({ type: SpendFiguresView }) totals!: SpendFiguresView;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description:
      'The bound on `rows` this answer applied (the `top` asked for, else its default); null for a page (`limit`)',
  })
  top!: number | null;
  @ApiProperty({
    description: 'True when the report has more rows than `top`: `rows` holds the costliest, `remainder` the rest',
  })
  truncated!: boolean;
  @ApiProperty({
    type: SpendRemainderView,
    nullable: true,
    description:
      'The rows left out by `top`, counted and summed (null when none were): the figures of `rows` plus these are the whole report’s. Grouped by tag, rows count a call in each of its key’s tags, so `totals` (each call once) can be less',
  })
  remainder!: SpendRemainderView | null;
  @ApiPropertyOptional({
    type: SpendReportPageView,
    description: 'With `limit`: which lines `rows` are, and the subtotal lines among them',
  })
  page?: SpendReportPageView;
  @ApiPropertyOptional({
    type: PerDaySeriesView,
    description: 'With `limit` and a breakdown by day: spend per day stacked by the other breakdown, from every row',
  })
  perDay?: PerDaySeriesView;
}

/** A report cut to one page (pageSpendReport): the page's rows, its subtotal lines and the chart's series. */
export function toPagedSpendReportView(r: SpendReport, currency: string, paged: PagedSpendReport): SpendReportView {
  return {
    ...toSpendReportView({ ...r, rows: paged.page.rows }, currency),
    page: {
      offset: paged.page.offset,
      limit: paged.page.limit,
      totalLines: paged.page.totalLines,
      totalRows: paged.page.totalRows,
      subtotals: paged.page.subtotals.map((s) => ({ ...s, figures: toFiguresView(s.figures) })),
    },
    ...(paged.perDay
      ? {
          perDay: {
            stackBy: paged.perDay.stackBy,
            series: paged.perDay.series,
            days: paged.perDay.days.map((d) => ({ day: d.day, costMicros: d.costMicros.map(microsToJson) })),
          },
        }
      : {}),
  };
}

export function toFiguresView(f: SpendFigures): SpendFiguresView {
  return {
    calls: microsToJson(f.calls),
    errors: microsToJson(f.errors),
    outputTokens: microsToJson(f.outputTokens),
    costMicros: microsToJson(f.costMicros),
  };
}

export function toSpendReportView(r: SpendReport, currency: string, top: number | null = null): SpendReportView {
  return {
    orgId: r.orgId,
    from: r.from,
    to: r.to,
    timeZone: r.timeZone,
    currency,
    tag: r.tag,
    filters: { ...r.filters },
    scope: { ...r.scope },
    groupBy: r.groupBy,
    columns: r.columns,
    rows: r.rows.map(({ figures, ...dims }) => ({ ...dims, ...toFiguresView(figures) })),
    totals: toFiguresView(r.totals),
    top,
    truncated: Boolean(r.remainder),
    remainder: r.remainder ? { rows: r.remainder.rows, ...toFiguresView(r.remainder.figures) } : null,
  };
}

export class BudgetUtilisationView {
  @ApiProperty({ format: 'uuid' }) budgetId!: string;
  @ApiProperty({ enum: ['ORG', 'TEAM', 'USER', 'KEY'] }) scope!: string;
  @ApiProperty({ format: 'uuid' }) scopeId!: string;
  @ApiProperty({ enum: ['DAY', 'WEEK', 'MONTH', 'QUARTER', 'TOTAL'] }) period!: string;
  @ApiProperty({ enum: ['HARD', 'SOFT'] }) mode!: string;
  @ApiProperty({ type: 'integer' }) limitMicros!: number;
  @ApiProperty({ type: 'integer', description: 'Settled spend in the current period' }) spentMicros!: number;
  @ApiProperty({ type: 'integer', description: 'Held by calls in flight' }) reservedMicros!: number;
  @ApiProperty({
    type: 'integer',
    description:
      'Allowance edges hold as leases for calls they admit without a round trip to Redis; unused, it goes back within seconds',
  })
  leasedMicros!: number;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'spent / limit in basis points (10000 = 100 %), rounded down; null for a zero limit',
  })
  utilisationBp!: number | null;
  @ApiProperty() periodStart!: Date;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'When the period resets; null for TOTAL',
  })
  resetsAt!: Date | null;
  @ApiProperty({ enum: ['counter', 'ledger'] }) source!: string;
  @ApiProperty({
    nullable: true,
    type: String,
    description:
      'What the scope is called: the organization’s or team’s name, the person’s name (else email), the key’s `name (prefix)`; null once it is gone',
  })
  scopeName!: string | null;
}

export function toBudgetUtilisationView(u: BudgetUtilisation): BudgetUtilisationView {
  return {
    ...u,
    limitMicros: microsToJson(u.limitMicros),
    spentMicros: microsToJson(u.spentMicros),
    reservedMicros: microsToJson(u.reservedMicros),
    leasedMicros: microsToJson(u.leasedMicros),
  };
}

export class PlatformSpendRowView extends SpendFiguresView {
  @ApiProperty({ format: 'uuid', nullable: true, type: String, description: 'null when not grouped by org' }) orgId!:
    string | null;
  @ApiProperty({ nullable: true, type: String, description: 'A purged organization keeps the name it had' }) orgName!:
    string | null;
  @ApiProperty({ nullable: true, type: String }) orgSlug!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'The organization’s own calendar day, when grouped by day',
  })
  day!: string | null;
}

export class PlatformSpendReportView {
  @ApiProperty({ example: '2026-11-01' }) from!: string;
  @ApiProperty({ example: '2026-11-30' }) to!: string;
  @ApiProperty({ enum: PLATFORM_REPORT_DIMENSIONS, isArray: true }) groupBy!: string[];
  @ApiProperty({ type: [PlatformSpendRowView] }) rows!: PlatformSpendRowView[];
  @ApiProperty({ type: SpendFiguresView }) totals!: SpendFiguresView;
}

export function toPlatformSpendReportView(r: PlatformSpendReport): PlatformSpendReportView {
  return {
    from: r.from,
    to: r.to,
    groupBy: r.groupBy,
    rows: r.rows.map((row) => ({
      orgId: row.orgId || null,
      orgName: row.orgName,
      orgSlug: row.orgSlug,
      day: row.day,
      ...toFiguresView(row.figures),
    })),
    totals: toFiguresView(r.totals),
  };
}

export class RollupRebuildView {
  @ApiProperty({ description: 'The worker’s job: wait for it, the rollups are rebuilt when it completes' })
  jobId!: string;

  @ApiProperty({ type: String, nullable: true, example: '2026-11-22', description: 'The day rebuilt; null: every day' })
  day!: string | null;
}
