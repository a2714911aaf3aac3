import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonShapeScanner } from './json-body';

/** Nesting depth, and object keys plus array items less one per non-empty array, measured the slow way. */
function shapeOf(value: unknown, depth = 1): { depth: number; values: number; keys: number } {
  if (typeof value !== 'object' || value === null) return { depth: depth - 1, values: 0, keys: 0 };
  const items = Array.isArray(value) ? value : Object.values(value);
  let deepest = depth;
  let values = Array.isArray(value) ? Math.max(0, items.length - 1) : items.length;
  let keys = Array.isArray(value) ? 0 : items.length;
  for (const item of items) {
    const inner = shapeOf(item, depth + 1);
    deepest = Math.max(deepest, inner.depth);
    values += inner.values;
    keys += inner.keys;
  }
  return { depth: deepest, values, keys };
}

function scan(text: string, limits: { maxDepth: number; maxValues: number; maxKeys?: number }, cuts: number[] = []) {
  const bytes = Buffer.from(text);
  const scanner = new JsonShapeScanner({ maxKeys: Number.MAX_SAFE_INTEGER, ...limits });
  const bounds = [...new Set([0, ...cuts.map((c) => c % (bytes.length + 1)), bytes.length])].sort((a, b) => a - b);
  for (let i = 1; i < bounds.length; i++) {
    const over = scanner.feed(bytes.subarray(bounds[i - 1], bounds[i]));
    if (over) return over.limit;
  }
  return null;
}

describe('JsonShapeScanner', () => {
  it('should refuse exactly the bodies deeper, with more values or more keys than the limits, however the bytes are cut', () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 6 }),
        fc.integer({ min: 0, max: 7 }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 0, max: 30 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (value, maxDepth, maxValues, maxKeys, cuts) => {
          const text = JSON.stringify(value);
          const shape = shapeOf(value);
          const refused = scan(text, { maxDepth, maxValues, maxKeys }, cuts);
          if (shape.depth <= maxDepth && shape.values <= maxValues && shape.keys <= maxKeys) expect(refused).toBeNull();
          else expect(refused).not.toBeNull();
          if (refused === 'maxDepth') expect(shape.depth).toBeGreaterThan(maxDepth);
          if (refused === 'maxValues') expect(shape.values).toBeGreaterThan(maxValues);
          if (refused === 'maxKeys') expect(shape.keys).toBeGreaterThan(maxKeys);
        },
      ),
    );
  });

  it('should not count brackets, colons or commas inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ a: '[[[{{{:,:,"\\\\', b: ['"]]]"'] });
    expect(scan(text, { maxDepth: 2, maxValues: 2 })).toBeNull();
    expect(scan(text, { maxDepth: 1, maxValues: 2 })).toBe('maxDepth');
  });
});
