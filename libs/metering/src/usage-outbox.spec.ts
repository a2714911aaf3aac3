import { USAGE_ENTRY_FIELD } from '@tollgate/queue';
import { describe, expect, it } from 'vitest';
import { UsageEvent, toPayload } from './usage-event';
import { parseUsageEntry, usageEntryFields } from './usage-outbox';

const EVENT: UsageEvent = {
  id: 'call-1',
  orgId: '00000000-0000-4000-8000-000000000001',
  teamId: '00000000-0000-4000-8000-000000000002',
  userId: '00000000-0000-4000-8000-000000000003',
  keyId: '00000000-0000-4000-8000-000000000004',
  upstreamId: '00000000-0000-4000-8000-000000000005',
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
    expect(
      parseUsageEntry([USAGE_ENTRY_FIELD, JSON.stringify({ ...toPayload(EVENT), outcome: 'MAYBE', inputTokens: -1 })]),
    ).toEqual({
      problem: expect.stringMatching(/^outcome .*, inputTokens .*/),
      eventId: 'call-1',
    });
  });

  it('should refuse what the ledger columns would refuse, so one entry cannot stall its batch', () => {
    const bad = { ...toPayload(EVENT), orgId: 'org-1', outputTokens: 2 ** 31, costMicros: '1'.repeat(19) };
    expect(parseUsageEntry([USAGE_ENTRY_FIELD, JSON.stringify(bad)]).problem).toMatch(
      /^orgId .*, costMicros .*, outputTokens .*/,
    );
  });

  it('should not take a field value for the field name', () => {
    expect(parseUsageEntry(['x', USAGE_ENTRY_FIELD, 'y', 'z']).problem).toBe('the entry has no "e" field');
  });
});
