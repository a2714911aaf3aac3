import { countTokens } from '@tollgate/tokens';
import { describe, expect, it } from 'vitest';
import { budgetedPage, effectiveMaxTokens } from './disclosure-pager';
import { DisclosureException } from './disclosure.exception';

const items = Array.from({ length: 40 }, (_, i) => ({
  name: `tool_${String(i).padStart(2, '0')}`,
  text: 'some words about the tool '.repeat(1 + (i % 4)),
}));

function page(maxTokens: number, from = 0) {
  return budgetedPage({
    items: items.slice(from),
    maxTokens,
    render: (item) => item,
    itemTokens: (item) => countTokens(JSON.stringify(item)),
    cursorAfter: (item) => `n1~${item.name}`,
    envelope: (rendered, tooLarge) => ({
      tools: rendered,
      ...(tooLarge.length ? { tooLarge: tooLarge.map((t) => t.name) } : {}),
    }),
  });
}

describe('budgetedPage', () => {
  it('should fit the budget and report its exact own token count when items exceed it', () => {
    for (const maxTokens of [60, 150, 400]) {
      const { answer, json } = page(maxTokens);
      expect(answer.tokens).toBeLessThanOrEqual(maxTokens);
      expect(countTokens(json)).toBe(answer.tokens);
      expect(answer.hasMore).toBe(true);
      const shown = answer.tools as { name: string }[];
      expect(answer.cursor).toBe(`n1~${shown[shown.length - 1].name}`);
    }
  });

  it('should say there is no more and give no cursor when everything fits', () => {
    const { answer } = page(100_000);
    expect(answer.tools).toHaveLength(40);
    expect(answer.hasMore).toBe(false);
    expect(answer.cursor).toBeUndefined();
  });

  it('should report an item too large for any page and move past it when the budget is small', () => {
    const result = budgetedPage({
      items: [{ name: 'huge', text: 'x '.repeat(500) }, ...items.slice(0, 2)],
      maxTokens: 120,
      render: (item) => item,
      itemTokens: (item) => countTokens(JSON.stringify(item)),
      cursorAfter: (item) => `n1~${item.name}`,
      envelope: (rendered, tooLarge) => ({ tools: rendered, tooLarge: tooLarge.map((t) => t.name) }),
    });
    expect(result.answer.tooLarge).toEqual(['huge']);
    expect(result.answer.tokens).toBeLessThanOrEqual(120);
    expect(result.consumed).toBeGreaterThan(1);
  });

  it('should refuse when the budget cannot hold an empty answer', () => {
    expect(() => page(5)).toThrow(DisclosureException);
  });
});

describe('effectiveMaxTokens', () => {
  it('should never exceed the policy ceiling when the caller asks for more', () => {
    expect(effectiveMaxTokens(5000, 1000, 2000)).toBe(2000);
    expect(effectiveMaxTokens(undefined, 1000)).toBe(1000);
    expect(() => effectiveMaxTokens(0, 1000)).toThrow(DisclosureException);
  });
});
