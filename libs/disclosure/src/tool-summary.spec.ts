import { describe, expect, it } from 'vitest';
import { guessCategory, oneLineSummary, parameterSignature, simplifyParameters, typedStub } from './tool-summary';

const schema = {
  type: 'object',
  properties: {
    page: { type: 'integer', description: 'Page number' },
    owner: { type: 'string', description: 'Repository owner' },
    state: { type: 'string', enum: ['open', 'closed'] },
    labels: { type: 'array', items: { type: 'string' } },
  },
  required: ['owner'],
};

describe('oneLineSummary', () => {
  it('should keep the first sentence on one line when the description has several', () => {
    expect(oneLineSummary('Get a summary.\nThen more text follows.')).toBe('Get a summary.');
  });

  it('should cut at a word boundary with an ellipsis when the sentence is too long', () => {
    const summary = oneLineSummary('word '.repeat(50), 30);
    expect(Array.from(summary).length).toBeLessThanOrEqual(30);
    expect(summary.endsWith('…')).toBe(true);
  });
});

describe('simplifyParameters', () => {
  it('should list required parameters first with short types when a schema has several', () => {
    const params = simplifyParameters(schema);
    expect(params.map((p) => p.name)).toEqual(['owner', 'page', 'state', 'labels']);
    expect(parameterSignature(params)).toBe('owner: string, page?: number, state?: "open"|"closed", labels?: string[]');
  });
});

describe('guessCategory', () => {
  it('should keep the registered category when one is given', () => {
    expect(guessCategory({ name: 'x__create_chart', category: 'Finance' })).toBe('Finance');
  });

  it('should guess from keywords when no category is given', () => {
    expect(
      guessCategory({ name: 'github__list_commits', description: 'List commits of a branch in a repository' }),
    ).toBe('Code');
    expect(guessCategory({ name: 'x__thing', description: 'Does something' })).toBe('Miscellaneous');
  });
});

describe('typedStub', () => {
  it('should declare a typed function with a doc line when asked for code mode', () => {
    expect(typedStub({ name: 'github__list_issues', description: 'List issues. More.', inputSchema: schema })).toBe(
      '/** List issues. */\nfunction github__list_issues(args: { page?: number; owner: string; state?: "open" | "closed"; labels?: string[] }): Promise<unknown>;',
    );
  });

  it('should make a valid identifier when the tool name has hyphens', () => {
    expect(typedStub({ name: 'opgg-mcp__lol-summoner-search', inputSchema: { type: 'object' } })).toBe(
      'function opgg_mcp__lol_summoner_search(args: Record<string, unknown>): Promise<unknown>;',
    );
  });
});
