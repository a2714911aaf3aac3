import { describe, expect, it } from 'vitest';
import { parseOutboxEntry } from './outbox-entry';
import { TrailEvent, parseTrailEntry, trailEntryFields, trailStepJson } from './trail-event';

const STEP: TrailEvent = {
  id: '00001764140000000-000001-abcdef12',
  orgId: '6f1c2b7e-3f4a-4b8e-9d2a-1c2b3d4e5f60',
  teamId: '6f1c2b7e-3f4a-4b8e-9d2a-1c2b3d4e5f61',
  userId: '6f1c2b7e-3f4a-4b8e-9d2a-1c2b3d4e5f62',
  keyId: '6f1c2b7e-3f4a-4b8e-9d2a-1c2b3d4e5f63',
  sessionId: 's-1',
  kind: 'SEARCH',
  name: 'tollgate__search_tools',
  catalogVersion: '0123456789abcdef',
  tokens: 120,
  ok: true,
  code: null,
  callId: null,
  costMicros: null,
  detail: { query: 'pie chart', names: ['charts__pie'] },
  content: null,
  occurredAt: new Date('2026-11-26T08:00:00.000Z'),
};

describe('trail outbox entries', () => {
  it('should read back the step it wrote, as a trail entry of the outbox', () => {
    const fields = trailEntryFields(STEP);
    expect(parseTrailEntry(fields)).toEqual({ trail: [STEP], problem: null, trailId: null });
    expect(parseOutboxEntry(fields)).toEqual({ trail: [STEP] });
    const second = { ...STEP, id: `${STEP.id}-2`, kind: 'CALL' as const, callId: 'c-1', costMicros: 5 };
    expect(parseOutboxEntry(trailEntryFields([STEP, second]))).toEqual({ trail: [STEP, second] });
  });

  it('should write the valid steps of an entry and dead-letter it for a step the table would refuse, naming the field', () => {
    const [field, value] = trailEntryFields([STEP, { ...STEP, id: 'bad-step' }]);
    const [good, badStep] = JSON.parse(value) as Record<string, unknown>[];
    const bad = JSON.stringify([good, { ...badStep, kind: 'GUESS', tokens: -1 }]);
    const parsed = parseOutboxEntry([field, bad]);
    expect(parsed.trail).toEqual([STEP]);
    expect(parsed.invalid).toMatchObject({ claimedId: 'bad-step', field: 't' });
    expect(parsed.invalid?.reason).toContain('kind');
    expect(parsed.invalid?.reason).toContain('tokens');
  });

  it('should write a step an edge makes in its payload form as the same JSON as the step', () => {
    expect(trailStepJson({ ...STEP, occurredAt: STEP.occurredAt.toISOString() })).toBe(trailStepJson(STEP));
  });

  it('should drop NUL characters, which Postgres jsonb cannot hold', () => {
    const [field, value] = trailEntryFields({ ...STEP, detail: { query: 'a\u0000b', path: 'c:\\u0000d' } });
    expect(parseTrailEntry([field, value])?.trail[0].detail).toEqual({ query: 'ab', path: 'c:\\u0000d' });
  });
});
