import { describe, expect, it } from 'vitest';
import { sampleUsageEvent } from './sample-usage-event';
import { parseUsageEvent, toPayload, USAGE_EVENT_PAYLOAD_SCHEMA, UsageEvent, validPayload } from './usage-event';

const EVENT: UsageEvent = sampleUsageEvent();

const BASE = toPayload(EVENT) as unknown as Record<string, unknown>;

// Values each field may take in an outbox entry, valid or not (JSON values, as entries are JSON).
const VALUES: unknown[] = [
  undefined,
  null,
  '',
  'x',
  'not-a-uuid',
  '00000000-0000-4000-8000-00000000000G',
  'ABCDEF00-0000-4000-8000-000000000001',
  '00000000000040008000000000000001',
  '123',
  '-9',
  '1'.repeat(18),
  '1'.repeat(19),
  '1.5',
  '2026-11-22T10:00:00Z',
  '2026-13-45',
  'OK',
  'TOOL_ERROR',
  'UPSTREAM_ERROR',
  'ok',
  '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  '00-00000000000000000000000000000000-b7ad6b7169203331-01',
  0,
  -1,
  1.5,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31),
  -(2 ** 31) - 1,
  1e21,
  true,
  [],
  {},
];

describe('usage event payloads', () => {
  it('should take a payload without the schema only when the schema takes it, as the same payload', () => {
    let fast = 0;
    const payloads: unknown[] = [BASE, { ...BASE, extra: 1 }, { ...BASE, traceparent: undefined }, null, [], 'x', 42];
    for (const field of Object.keys(BASE)) for (const v of VALUES) payloads.push({ ...BASE, [field]: v });
    for (const payload of payloads) {
      const zod = USAGE_EVENT_PAYLOAD_SCHEMA.safeParse(payload);
      const mine = validPayload(payload);
      // Everything the schema takes without a correction is taken without it as well (the fast path
      // is the common case); whatever is taken without it is exactly what the schema gives.
      if (mine) {
        fast++;
        expect(zod.success, JSON.stringify(payload)).toBe(true);
        expect(mine).toStrictEqual(zod.data);
      } else {
        expect(zod.success && JSON.stringify(zod.data) === JSON.stringify(payload), JSON.stringify(payload)).toBe(
          false,
        );
      }
      expect(parseUsageEvent(payload)).toEqual(
        zod.success ? { event: parseUsageEvent(zod.data).event } : { problem: expect.any(String) },
      );
    }
    expect(fast).toBeGreaterThan(50);
  });
});
