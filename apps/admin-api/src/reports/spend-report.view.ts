import { ApiProperty } from '@nestjs/swagger';
import { microsToJson } from '@tollgate/kernel';
import { BudgetUtilisation, REPORT_DIMENSIONS, SpendFigures, SpendReport } from '@tollgate/reporting';

export class SpendFiguresView {
  @ApiProperty({ type: 'integer' }) calls!: number;
  @ApiProperty({ type: 'integer', description: 'Calls whose outcome was not OK' }) errors!: number;
  @ApiProperty({ type: 'integer' }) outputTokens!: number;
  @ApiProperty({ type: 'integer', description: 'Integer micro-units' }) costMicros!: number;
}

export class SpendReportView {
  @ApiProperty({ format: 'uuid' }) orgId!: string;
  @ApiProperty({ example: '2026-11-01' }) from!: string;
  @ApiProperty({ example: '2026-11-30' }) to!: string;
  @ApiProperty({ example: 'UTC', description: 'Days are UTC calendar days' }) timeZone!: 'UTC';
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
  return { calls: microsToJson(f.calls), errors: microsToJson(f.errors), outputTokens: microsToJson(f.outputTokens), costMicros: microsToJson(f.costMicros) };
}

export function toSpendReportView(r: SpendReport): SpendReportView {
  return {
    orgId: r.orgId,
    from: r.from,
    to: r.to,
    timeZone: 'UTC',
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
  @ApiProperty({ type: 'integer', description: 'Allowance edges hold as leases for calls they admit without a round trip to Redis; unused, it goes back within seconds' }) leasedMicros!: number;
  @ApiProperty({ type: 'integer', nullable: true, description: 'spent / limit in basis points (10000 = 100 %), rounded down; null for a zero limit' })
  utilisationBp!: number | null;
  @ApiProperty() periodStart!: Date;
  @ApiProperty({ nullable: true, description: 'When the period resets; null for TOTAL' }) resetsAt!: Date | null;
  @ApiProperty({ enum: ['counter', 'ledger'] }) source!: string;
}

export function toBudgetUtilisationView(u: BudgetUtilisation): BudgetUtilisationView {
  return { ...u, limitMicros: microsToJson(u.limitMicros), spentMicros: microsToJson(u.spentMicros), reservedMicros: microsToJson(u.reservedMicros), leasedMicros: microsToJson(u.leasedMicros) };
}
