import { describe, expect, it } from 'vitest';
import { pickHotList } from './hot-list';

describe('pickHotList', () => {
  it('should take the hottest tools that fit and pass over one too large when the budget is tight', () => {
    const hot = pickHotList(
      [
        { name: 'b', tierScore: 90, schemaTokens: 100 },
        { name: 'a', tierScore: 90, schemaTokens: 100 },
        { name: 'big', tierScore: 80, schemaTokens: 500 },
        { name: 'c', tierScore: 10, schemaTokens: 50 },
        { name: 'cold', tierScore: 0, schemaTokens: 1 },
      ],
      260,
    );
    expect(hot.tools.map((t) => t.name)).toEqual(['a', 'b', 'c']);
    expect(hot.tokens).toBe(253);
  });
});
