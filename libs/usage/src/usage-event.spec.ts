import { describe, expect, it } from 'vitest';
import { sampleUsageEvent } from './sample-usage-event';
import {
  fromPayload,
  newCallId,
  parseUsageEvent,
  toPayload,
  USAGE_EVENT_PAYLOAD_SCHEMA,
  UsageEvent,
  validUsageEvent,
} from './usage-event';

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
  it('should take a payload without the schema only when the schema takes it, as the same event', () => {
    let fast = 0;
    const payloads: unknown[] = [BASE, { ...BASE, extra: 1 }, { ...BASE, traceparent: undefined }, null, [], 'x', 42];
    for (const field of Object.keys(BASE)) for (const v of VALUES) payloads.push({ ...BASE, [field]: v });
    for (const payload of payloads) {
      const zod = USAGE_EVENT_PAYLOAD_SCHEMA.safeParse(payload);
      const mine = validUsageEvent(payload);
      // Everything the schema takes without a correction is taken without it as well (the fast path
      // is the common case); whatever is taken without it is exactly what the schema gives.
      if (mine) {
        fast++;
        expect(zod.success, JSON.stringify(payload)).toBe(true);
        expect(mine).toStrictEqual(fromPayload(zod.data!));
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

describe('call ids', () => {
  it('should make UUIDs of version 7 that sort by their time, byte by byte, when made at different milliseconds', () => {
    const at = Date.UTC(2026, 10, 27, 6, 30);
    const ids = [newCallId(at + 2), newCallId(at), newCallId(at + 1), newCallId(at + 1_000_000)];
    for (const id of ids) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(USAGE_EVENT_PAYLOAD_SCHEMA.shape.orgId.safeParse(id).success).toBe(true);
      expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at + [2, 0, 1, 1_000_000][ids.indexOf(id)]);
    }
    expect([...ids].sort()).toEqual([ids[1], ids[2], ids[0], ids[3]]);
  });

  it('should never repeat an id when many are made in the same millisecond', () => {
    const at = Date.now();
    const ids = new Set(Array.from({ length: 10_000 }, () => newCallId(at)));
    expect(ids.size).toBe(10_000);
  });
});
