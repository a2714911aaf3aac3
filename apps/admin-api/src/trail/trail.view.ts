import { ApiProperty } from '@nestjs/swagger';
import { TRAIL_KINDS, TrailKind, microsToJson } from '@tollgate/kernel';
import { TrailPage, TrailStepRow, encodeCallCursor } from '@tollgate/reporting';

export class TrailStepView {
  @ApiProperty({ description: 'Sorts in recording order' }) id!: string;
  @ApiProperty({ format: 'date-time' }) occurredAt!: string;
  @ApiProperty({ nullable: true, type: String, description: 'The MCP session; null for a request made without one' })
  sessionId!: string | null;
  @ApiProperty({ format: 'uuid' }) teamId!: string;
  @ApiProperty({ format: 'uuid' }) userId!: string;
  @ApiProperty({ format: 'uuid' }) keyId!: string;
  @ApiProperty({ enum: TRAIL_KINDS }) kind!: TrailKind;
  @ApiProperty({ description: 'The tool (meta-tool or governed tool), resource URI or prompt' }) name!: string;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'The disclosure catalog version the answer was rendered from (the same on every edge)',
  })
  catalogVersion!: string | null;
  @ApiProperty({ type: 'integer', description: 'Tokens (o200k_base) of the answer the agent received' })
  tokens!: number;
  @ApiProperty() ok!: boolean;
  @ApiProperty({ nullable: true, type: String, example: 'BUDGET_EXCEEDED' }) code!: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'The ledger row (UsageEvent id) of a call, read or get' })
  callId!: string | null;
  @ApiProperty({ nullable: true, type: 'integer', description: 'Integer micro-units; a script: all its calls' })
  costMicros!: number | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'Metadata: a search’s query and ranked names, schema and stub names and paths read, a script’s calls (tool, line, ok, code, callId, costMicros) and failing line',
  })
  detail!: Record<string, unknown>;
  @ApiProperty({
    nullable: true,
    type: 'object',
    additionalProperties: true,
    description: 'Arguments, answer and script text: only when the org kept FULL trails, scrubbed of secrets',
  })
  content!: Record<string, unknown> | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description:
      'A call: the step of its session (search, schema, stub or doc read) that last named its tool. A resource read or prompt get: the list of its session (resources/list, resources/templates/list, prompts/list) that last showed it',
  })
  ledBy!: string | null;
  @ApiProperty({
    nullable: true,
    type: [String],
    description: 'A script: the stub and doc paths its session read before it',
  })
  readBefore!: string[] | null;
}

export class TrailSummaryView {
  @ApiProperty({ type: 'integer' }) steps!: number;
  @ApiProperty({ type: 'integer', description: 'Tokens of lists, searches, schema, stub and doc reads' })
  discoveryTokens!: number;
  @ApiProperty({ type: 'integer', description: 'Tokens of call, script, page, read and get answers' })
  callTokens!: number;
  @ApiProperty({ type: 'integer', description: 'Integer micro-units' }) costMicros!: number;
}

export class TrailPageView {
  @ApiProperty({ type: [TrailStepView] }) steps!: TrailStepView[];
  @ApiProperty({ nullable: true, type: String, description: 'Pass as cursor for the next page; null on the last' })
  nextCursor!: string | null;
  @ApiProperty({ type: TrailSummaryView, description: 'Totals of every step the filters select' })
  summary!: TrailSummaryView;
}

export function toTrailStepView(r: TrailStepRow): TrailStepView {
  return {
    ...r,
    occurredAt: r.occurredAt.toISOString(),
    costMicros: r.costMicros === null ? null : microsToJson(r.costMicros),
  };
}

export function toTrailPageView(page: TrailPage): TrailPageView {
  return {
    steps: page.rows.map(toTrailStepView),
    nextCursor: page.nextCursor ? encodeCallCursor(page.nextCursor) : null,
    summary: { ...page.summary, costMicros: microsToJson(page.summary.costMicros) },
  };
}
