import { REFUSAL_ENTRY_FIELD, USAGE_ENTRY_FIELD } from './outbox-streams';
import { describe, expect, it } from 'vitest';
import { sampleUsageEvent } from './sample-usage-event';
import { UsageEvent, toPayload, traceIdOf } from './usage-event';
import { RefusedCall, refusalEntryFields } from './refused-call';
import { parseOutboxEntry, parseUsageEntry, usageEntryFields } from './outbox-entry';

const EVENT: UsageEvent = sampleUsageEvent({ priceRuleId: null, traceparent: undefined });

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

  it("should carry the call's trace context, and drop a malformed one without refusing the event", () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(parseUsageEntry(usageEntryFields({ ...EVENT, traceparent }))).toEqual({
      event: { ...EVENT, traceparent },
      eventId: 'call-1',
    });
    for (const bad of ['00-00000000000000000000000000000000-b7ad6b7169203331-01', 'x'.repeat(55), 42]) {
      const entry = [USAGE_ENTRY_FIELD, JSON.stringify({ ...toPayload(EVENT), traceparent: bad })];
      expect(parseUsageEntry(entry)).toEqual({ event: { ...EVENT, traceparent: null }, eventId: 'call-1' });
    }
    expect(traceIdOf(traceparent)).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(traceIdOf(null)).toBeNull();
  });

  it('should not take a field value for the field name', () => {
    expect(parseUsageEntry(['x', USAGE_ENTRY_FIELD, 'y', 'z']).problem).toBe('the entry has no "e" field');
  });

  it('should tell the two entry kinds apart and keep what an invalid one carried for its dead letter', () => {
    const refused: RefusedCall = {
      id: 'refusal-1',
      orgId: EVENT.orgId,
      teamId: EVENT.teamId,
      userId: EVENT.userId,
      keyId: EVENT.keyId,
      upstreamId: null,
      toolName: 'echo',
      code: 'BUDGET_EXCEEDED',
      budgetId: '00000000-0000-4000-8000-000000000006',
      calls: 1,
      latencyMs: 2,
      occurredAt: EVENT.occurredAt,
    };
    expect(parseOutboxEntry(usageEntryFields(EVENT))).toEqual({ event: EVENT });
    expect(parseOutboxEntry(refusalEntryFields(refused))).toEqual({ refusal: refused });
    expect(parseOutboxEntry([REFUSAL_ENTRY_FIELD, '{"id":"r-2"}']).invalid).toMatchObject({
      claimedId: 'r-2',
      field: REFUSAL_ENTRY_FIELD,
      payload: '{"id":"r-2"}',
    });
    expect(parseOutboxEntry(['other', 'x']).invalid).toEqual({
      reason: 'the entry has no "e" field',
      claimedId: null,
      field: USAGE_ENTRY_FIELD,
      payload: '["other","x"]',
    });
  });
});
