import { ApiProperty } from '@nestjs/swagger';
import { microsToJson } from '@tollgate/kernel';
import { CALL_OUTCOMES, CallLogPage, CallOutcome, encodeCallCursor } from '@tollgate/reporting';

export class CallLogRowView {
  @ApiProperty({ description: 'The call id (a ledger row) or the refusal id' }) id!: string;
  @ApiProperty({ format: 'date-time' }) occurredAt!: string;
  @ApiProperty({ enum: CALL_OUTCOMES }) outcome!: CallOutcome;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'BUDGET_EXCEEDED',
    description: 'Why a refused call was refused',
  })
  code!: string | null;
  @ApiProperty({ format: 'uuid' }) teamId!: string;
  @ApiProperty({ nullable: true, type: String }) teamName!: string | null;
  @ApiProperty({ format: 'uuid' }) userId!: string;
  @ApiProperty({ nullable: true, type: String }) userEmail!: string | null;
  @ApiProperty({ format: 'uuid' }) keyId!: string;
  @ApiProperty({ nullable: true, type: String }) keyName!: string | null;
  @ApiProperty({ nullable: true, type: String }) keyPrefix!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'uuid',
    description: 'Null for a tool the catalog does not have',
  })
  upstreamId!: string | null;
  @ApiProperty({ nullable: true, type: String }) upstreamNamespace!: string | null;
  @ApiProperty() toolName!: string;
  @ApiProperty({ type: 'integer', description: 'Integer micro-units (0 for a refused call)' }) costMicros!: number;
  @ApiProperty({ type: 'integer' }) outputTokens!: number;
  @ApiProperty({ type: 'integer' }) latencyMs!: number;
  @ApiProperty({
    type: 'integer',
    description:
      '1, or for a refused call the number of refusals of this key, tool and code the row stands for (past the per-key cap of refusals logged one by one)',
  })
  calls!: number;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'uuid',
    description: 'The budget that refused a BUDGET_EXCEEDED call',
  })
  budgetId!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: '4bf92f3577b34da6a3ce929d0e0e4736',
    description:
      'The call’s OpenTelemetry trace id (the edge’s trace, or the agent’s own traceparent with telemetry off); null for a refused call or one without trace context',
  })
  traceId!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description:
      'The MCP session the call was made in, from its agent trail (GET …/trail?sessionId=); null for a refusal, a call without a session, or an org that keeps no trail',
  })
  sessionId!: string | null;
}

export class CallLogPageView {
  @ApiProperty({ example: '2026-11-01' }) from!: string;
  @ApiProperty({ example: '2026-11-30' }) to!: string;
  @ApiProperty({ example: 'Europe/Paris' }) timeZone!: string;
  @ApiProperty({ type: [CallLogRowView], description: 'Newest first' }) rows!: CallLogRowView[];
  @ApiProperty({ nullable: true, type: String, description: 'Pass as cursor for the next page; null on the last page' })
  nextCursor!: string | null;
}

export function toCallLogPageView(page: CallLogPage): CallLogPageView {
  return {
    from: page.from,
    to: page.to,
    timeZone: page.timeZone,
    rows: page.rows.map((r) => ({
      ...r,
      occurredAt: r.occurredAt.toISOString(),
      costMicros: microsToJson(r.costMicros),
    })),
    nextCursor: page.nextCursor ? encodeCallCursor(page.nextCursor) : null,
  };
}
