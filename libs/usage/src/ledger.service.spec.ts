import { describe, expect, it } from 'vitest';
import { usageEventCopyRows } from './ledger.service';
import { sampleUsageEvent } from './sample-usage-event';

describe('usage events in COPY text', () => {
  it('should write one tab-separated line an event, nulls as \\N, when the free text needs no escaping', () => {
    const event = sampleUsageEvent({ priceRuleId: null, traceparent: null });
    const [line, end] = usageEventCopyRows([event]).split('\n');
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
    const fields = usageEventCopyRows([event]).split('\n')[0].split('\t');
    expect(fields[0]).toBe('a\\\\b\\tc');
    expect(fields[6]).toBe('x\\ny\\rz');
    expect(fields).toHaveLength(15);
  });
});
