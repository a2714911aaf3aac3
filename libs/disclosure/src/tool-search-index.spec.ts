import { describe, expect, it } from 'vitest';
import { DisclosureTool } from './disclosure-tool';
import { ToolSearchIndex } from './tool-search-index';
import { guessCategory } from './tool-summary';

function tool(namespace: string, short: string, description: string, category?: string): DisclosureTool {
  return { name: `${namespace}__${short}`, namespace, description, inputSchema: { type: 'object' }, category };
}

const tools = [
  tool('weather', 'get_forecast', 'Weather forecast for a city', 'Discovery'),
  tool('chart', 'generate_pie_chart', 'Draw a pie chart of shares', 'Visualization'),
  tool('chart', 'generate_line_chart', 'Draw a line chart of a series', 'Visualization'),
  tool('github', 'list_pull_requests', 'List pull requests in a repository'),
  tool('gitlab', 'list_pull_requests', 'List pull requests in a repository'),
];

describe('ToolSearchIndex', () => {
  const index = new ToolSearchIndex(tools, guessCategory);
  const search = (query: string, filter = {}) => index.search(index.queryTerms(query), filter).map((h) => h.name);

  it('should rank the tool whose split name matches first when a user words the query', () => {
    expect(search('pie chart')[0]).toBe('chart__generate_pie_chart');
    expect(search('forecast for Paris')[0]).toBe('weather__get_forecast');
  });

  it('should find a tool through a synonym when the user does not use its words', () => {
    expect(search('plot shares as a pie')[0]).toBe('chart__generate_pie_chart');
  });

  it('should break equal scores by name when two servers offer the same tool', () => {
    expect(search('pull requests').slice(0, 2)).toEqual(['github__list_pull_requests', 'gitlab__list_pull_requests']);
  });

  it('should keep only matching tools when filtered by category or server', () => {
    expect(search('chart', { category: 'visualization' })).toEqual([
      'chart__generate_line_chart',
      'chart__generate_pie_chart',
    ]);
    expect(search('pull requests', { namespace: 'gitlab' })).toEqual(['gitlab__list_pull_requests']);
  });

  it('should rank identically when run twice', () => {
    expect(index.search(index.queryTerms('chart of a city'))).toEqual(
      index.search(index.queryTerms('chart of a city')),
    );
  });

  it('should score through a view exactly as an index of only the visible tools when others are hidden', () => {
    const visible = (name: string) => !name.startsWith('chart__generate_line') && !name.startsWith('gitlab__');
    const alone = new ToolSearchIndex(
      tools.filter((t) => visible(t.name)),
      guessCategory,
    );
    const view = index.view(visible);
    expect(view.docCount).toBe(alone.size);
    // 'line series': words only a hidden tool has.
    for (const query of ['pull requests', 'draw a chart', 'plot shares as a pie', 'forecast', 'line series forecast']) {
      const terms = index.queryTerms(query);
      expect(index.stats(terms, view)).toEqual(alone.stats(terms));
      expect(index.search(terms, {}, view)).toEqual(alone.search(terms));
    }
  });

  it('should share one view between callers when they see the same tools', () => {
    const first = index.view((name) => name.startsWith('chart__'));
    expect(index.view((name) => name.includes('generate_'))).toBe(first);
    expect(index.view((name) => name.startsWith('github__'))).not.toBe(first);
    expect(index.view(() => true)).toBe(index.view());
  });
});
