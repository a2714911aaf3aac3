import { describe, expect, it } from 'vitest';
import { usageEventCopyRows } from './ledger.service';
import { sampleUsageEvent } from './sample-usage-event';

describe('usage events in COPY text', () => {
  it('should write one tab-separated line an event, nulls as \\N, when the free text needs no escaping', () => {
    const event = sampleUsageEvent({ priceRuleId: null, traceparent: null });
    const [line, end] = usageEventCopyRows([event]).toString().split('\n');
    expect(end).toBe('');
    expect(line.split('\t')).toEqual([
      event.id,
      event.orgId,
      event.teamId,
      event.userId,
      event.keyId,
      event.upstreamId,
      event.toolName,
      event.outcome,
      String(event.costMicros),
      String(event.inputTokens),
      String(event.outputTokens),
      String(event.latencyMs),
      '\\N',
      event.occurredAt.toISOString(),
      '\\N',
    ]);
  });

  it('should escape backslash, tab, newline and return when an id or a tool name holds them', () => {
    const event = sampleUsageEvent({ id: 'a\\b\tc', toolName: 'x\ny\rz' });
    const fields = usageEventCopyRows([event]).toString().split('\n')[0].split('\t');
    expect(fields[0]).toBe('a\\\\b\\tc');
    expect(fields[6]).toBe('x\\ny\\rz');
    expect(fields).toHaveLength(15);
  });

  it('should keep every line whole when the lines outgrow the first buffer', () => {
    const events = Array.from({ length: 3 }, (_, i) =>
      sampleUsageEvent({ id: `call-${i}`, toolName: 'é'.repeat(600) }),
    );
    const lines = usageEventCopyRows(events).toString().split('\n');
    expect(lines.map((l) => l.split('\t')[0])).toEqual(['call-0', 'call-1', 'call-2', '']);
    expect(lines[2].split('\t')[6]).toBe('é'.repeat(600));
  });
});
