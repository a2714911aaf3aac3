import { describe, expect, it } from 'vitest';
import { parseOutboxEntry } from './usage-outbox';
import { TrailEvent, parseTrailEntry, trailEntryFields } from './trail-event';

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
    expect(parseTrailEntry(fields)).toEqual({ trail: STEP, trailId: STEP.id });
    expect(parseOutboxEntry(fields)).toEqual({ trail: STEP });
  });

  it('should dead-letter a step the table would refuse, naming the field', () => {
    const [field, value] = trailEntryFields(STEP);
    const bad = JSON.stringify({ ...JSON.parse(value), kind: 'GUESS', tokens: -1 });
    const parsed = parseOutboxEntry([field, bad]);
    expect(parsed.invalid).toMatchObject({ claimedId: STEP.id, field: 't' });
    expect(parsed.invalid?.reason).toContain('kind');
    expect(parsed.invalid?.reason).toContain('tokens');
  });

  it('should drop NUL characters, which Postgres jsonb cannot hold', () => {
    const [field, value] = trailEntryFields({ ...STEP, detail: { query: 'a\u0000b' } });
    expect(parseTrailEntry([field, value])?.trail?.detail).toEqual({ query: 'ab' });
  });
});
