import { ApiProperty } from '@nestjs/swagger';
import { microsToJson } from '@tollgate/kernel';
import {
  BudgetUtilisation,
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
}

export function toFiguresView(f: SpendFigures): SpendFiguresView {
  return {
    calls: microsToJson(f.calls),
    errors: microsToJson(f.errors),
    outputTokens: microsToJson(f.outputTokens),
    costMicros: microsToJson(f.costMicros),
  };
}

export function toSpendReportView(r: SpendReport, currency: string): SpendReportView {
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
