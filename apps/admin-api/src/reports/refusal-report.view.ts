import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { BlockingBudget, REFUSAL_DIMENSIONS, RefusalReport } from '@tollgate/reporting';

export class RefusalFiltersView {
  @ApiProperty({ type: [String], description: 'Team ids; empty: not filtered' }) teamId!: string[];
  @ApiProperty({ type: [String], description: 'User ids; empty: not filtered' }) userId!: string[];
  @ApiProperty({ type: [String], description: 'Key ids; empty: not filtered' }) keyId!: string[];
  @ApiProperty({ type: [String], description: 'Tool names; empty: not filtered' }) tool!: string[];
  @ApiProperty({ type: [String], description: 'Refusal codes; empty: not filtered' }) code!: string[];
}

export class RefusalRowView {
  @ApiPropertyOptional({ format: 'uuid' }) teamId?: string;
  @ApiPropertyOptional({ nullable: true, type: String }) teamName?: string | null;
  @ApiPropertyOptional({ format: 'uuid' }) userId?: string;
  @ApiPropertyOptional({ nullable: true, type: String }) userEmail?: string | null;
  @ApiPropertyOptional({ format: 'uuid' }) keyId?: string;
  @ApiPropertyOptional({ nullable: true, type: String }) keyName?: string | null;
  @ApiPropertyOptional({ nullable: true, type: String }) keyPrefix?: string | null;
  @ApiPropertyOptional({ description: 'The tool’s own name; the name the agent called when the tool is unknown' })
  toolName?: string;
  @ApiPropertyOptional({ example: 'BUDGET_EXCEEDED' }) code?: string;
  @ApiProperty({ type: 'integer', description: 'Refused calls in the group' }) refusedCalls!: number;
}

export class RefusalReportView {
  @ApiProperty({ format: 'uuid' }) orgId!: string;
  @ApiProperty({ example: '2026-11-01' }) from!: string;
  @ApiProperty({ example: '2026-11-30' }) to!: string;
  @ApiProperty({ example: 'Europe/Paris', description: 'The organization’s time zone: from and to are its days' })
  timeZone!: string;
  @ApiProperty({ enum: REFUSAL_DIMENSIONS, isArray: true }) groupBy!: string[];
  @ApiProperty({ type: RefusalFiltersView, description: 'Every filter applied, a scope’s forced one included' })
  filters!: RefusalFiltersView;
  @ApiProperty({ type: [RefusalRowView], description: 'Largest first, at most 1,000 groups' })
  rows!: RefusalRowView[];
  @ApiProperty({ type: 'integer', description: 'Every refused call in the range matching the filters' })
  totalRefusedCalls!: number;
  @ApiProperty({ description: 'More groups than the rows returned (the largest are returned)' })
  truncated!: boolean;
}

export class BlockingBudgetView {
  @ApiProperty({ format: 'uuid' }) budgetId!: string;
  @ApiProperty({ type: 'integer', description: 'BUDGET_EXCEEDED refusals by this budget in the window' })
  refusedCalls!: number;
  @ApiProperty({ format: 'date-time' }) lastRefusedAt!: string;
}

export class BlockingBudgetsView {
  @ApiProperty({ type: 'integer', example: 15, description: 'The window: refusals of the last this many minutes' })
  windowMinutes!: number;
  @ApiProperty({ type: [BlockingBudgetView] }) budgets!: BlockingBudgetView[];
}

export function toRefusalReportView(r: RefusalReport): RefusalReportView {
  return {
    orgId: r.orgId,
    from: r.from,
    to: r.to,
    timeZone: r.timeZone,
    groupBy: r.groupBy,
    filters: r.filters,
    rows: r.rows.map((row) => ({ ...row, refusedCalls: Number(row.refusedCalls) })),
    totalRefusedCalls: Number(r.totalRefusedCalls),
    truncated: r.truncated,
  };
}

export function toBlockingBudgetsView(windowMinutes: number, budgets: BlockingBudget[]): BlockingBudgetsView {
  return {
    windowMinutes,
    budgets: budgets.map((b) => ({
      budgetId: b.budgetId,
      refusedCalls: Number(b.refusedCalls),
      lastRefusedAt: b.lastRefusedAt.toISOString(),
    })),
  };
}
