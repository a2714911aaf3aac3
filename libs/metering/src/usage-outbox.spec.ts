import { USAGE_ENTRY_FIELD } from '@tollgate/queue';
import { describe, expect, it } from 'vitest';
import { UsageEvent, toPayload } from './usage-event';
import { parseUsageEntry, usageEntryFields } from './usage-outbox';

const EVENT: UsageEvent = {
  id: 'call-1',
  orgId: 'org-1',
  teamId: 'team-1',
  userId: 'user-1',
  keyId: 'key-1',
  upstreamId: 'up-1',
  toolName: 'echo',
  outcome: 'OK',
  costMicros: 9_007_199_254_740_993n,
  inputTokens: 0,
  outputTokens: 12,
  latencyMs: 3,
  priceRuleId: null,
  occurredAt: new Date('2026-11-22T10:00:00.123Z'),
};

describe('usage outbox entries', () => {
  it('should read back the event it encodes, money exact beyond 2^53', () => {
    expect(parseUsageEntry(usageEntryFields(EVENT))).toEqual({ event: EVENT, eventId: 'call-1' });
  });

  it('should say why an entry is not a usage event, naming the event id when it has one', () => {
    expect(parseUsageEntry(['other', 'x'])).toEqual({ problem: 'the entry has no "e" field', eventId: null });
    expect(parseUsageEntry([USAGE_ENTRY_FIELD, '{oops']).problem).toMatch(/^the "e" field is not JSON: /);
    expect(parseUsageEntry([USAGE_ENTRY_FIELD, JSON.stringify({ ...toPayload(EVENT), outcome: 'MAYBE', inputTokens: -1 })])).toEqual({
      problem: expect.stringMatching(/^outcome .*, inputTokens .*/),
      eventId: 'call-1',
    });
  });

  it('should not take a field value for the field name', () => {
    expect(parseUsageEntry(['x', USAGE_ENTRY_FIELD, 'y', 'z']).problem).toBe('the entry has no "e" field');
  });
});
