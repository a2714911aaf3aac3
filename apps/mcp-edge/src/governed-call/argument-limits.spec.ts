import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ARGUMENT_LIMITS, checkArguments, describeArgumentCheck } from './argument-limits';

function nested(depth: number): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let cur = root;
  for (let i = 1; i < depth; i++) cur = (cur.a = {}) as Record<string, unknown>;
  return root;
}

/** At a limit of exactly the arguments' UTF-8 JSON size they pass; one byte less and they are refused with that size. */
function expectExactSizeDecision(args: Record<string, unknown>): void {
  const bytes = Buffer.byteLength(JSON.stringify(args), 'utf8');
  const limits = { ...ARGUMENT_LIMITS, maxDepth: 1_000, maxKeys: 1_000_000, maxKeysPerObject: 1_000_000 };
  expect(checkArguments(args, { ...limits, maxBytes: bytes })).toEqual({ ok: true });
  expect(checkArguments(args, { ...limits, maxBytes: bytes - 1 })).toEqual({
    ok: false,
    limit: 'maxBytes',
    allowed: bytes - 1,
    measured: bytes,
  });
}

describe('checkArguments (limits on tool-call arguments)', () => {
  it('should accept ordinary arguments and none at all', () => {
    expect(checkArguments(undefined)).toEqual({ ok: true });
    expect(checkArguments({ q: 'weather', n: 3, tags: ['a', { b: [1, 2] }] })).toEqual({ ok: true });
    expect(checkArguments(nested(ARGUMENT_LIMITS.maxDepth))).toEqual({ ok: true });
  });

  it('should measure the depth of 200,000 levels without overflowing the stack', () => {
    expect(checkArguments(nested(200_000))).toEqual({ ok: false, limit: 'maxDepth', allowed: 64, measured: 200_000 });
    let arr: unknown[] = [];
    const root = { a: arr };
    for (let i = 0; i < 100_000; i++) arr = (arr[0] = []) as unknown[];
    expect(checkArguments(root)).toMatchObject({ ok: false, limit: 'maxDepth', measured: 100_002 });
  });

  it('should refuse too many keys in one object and in all', () => {
    const wide = Object.fromEntries(Array.from({ length: 1_001 }, (_, i) => [`k${i}`, i]));
    expect(checkArguments({ wide })).toEqual({ ok: false, limit: 'maxKeysPerObject', allowed: 1_000, measured: 1_001 });
    const many = { list: Array.from({ length: 2_001 }, () => ({ a: 1, b: 2, c: 3, d: 4, e: 5 })) };
    expect(checkArguments(many)).toEqual({ ok: false, limit: 'maxKeys', allowed: 10_000, measured: 10_006 });
  });

  it('should refuse arguments over 1 MiB as UTF-8 JSON, counting multi-byte characters', () => {
    expect(checkArguments({ s: 'x'.repeat(1024 * 1024) })).toMatchObject({
      ok: false,
      limit: 'maxBytes',
      allowed: 1_048_576,
      measured: 1_048_576 + 8,
    });
    // 400,000 euro signs are 1.2 MB in UTF-8 though only 400,000 UTF-16 units.
    expect(checkArguments({ s: '€'.repeat(400_000) })).toMatchObject({
      ok: false,
      limit: 'maxBytes',
      measured: 1_200_008,
    });
  });

  it('should decide the size limit exactly as the serialized arguments measure, for any JSON', () => {
    // The check serializes only arguments whose size bound passes the limit: the bound must never
    // be under the real size, or arguments just over the limit would pass.
    const args = fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue({ stringUnit: 'binary' }));
    const samples = [{ s: '\u0000\u001f"\\\ud800€😀' }, { n: [-0.0000012345678901234567, -1.7976931348623157e308] }];
    for (const sample of samples) expectExactSizeDecision(sample);
    fc.assert(fc.property(args, expectExactSizeDecision), { numRuns: 2_000 });
  });

  it('should say what was measured against which limit', () => {
    const check = checkArguments(nested(70));
    if (check.ok) throw new Error('expected a refusal');
    expect(describeArgumentCheck('fx__ping', check)).toBe(
      'The arguments of "fx__ping" are nested 70 levels deep, over the limit of 64.',
    );
  });
});
