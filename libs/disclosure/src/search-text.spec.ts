import { describe, expect, it } from 'vitest';
import { analyze, buildSynonymMap, splitWords, stem } from './search-text';

describe('splitWords', () => {
  it('should split snake_case, kebab-case and camelCase when a tool name mixes them', () => {
    expect(splitWords('get_stock-priceByDate')).toEqual(['get', 'stock', 'price', 'by', 'date']);
    expect(splitWords('npmVulnerabilities')).toEqual(['npm', 'vulnerabilities']);
    expect(splitWords('HTMLParser v2')).toEqual(['html', 'parser', 'v2']);
  });

  it('should index Chinese text as character bigrams when a description is not in English', () => {
    expect(splitWords('查询12306余票')).toEqual(['查询', '12306', '余票']);
  });
});

describe('stem', () => {
  it('should meet plural and verb forms when the user writes them differently', () => {
    expect(stem('charts')).toBe(stem('chart'));
    expect(stem('listing')).toBe(stem('list'));
    expect(stem('repositories')).toBe(stem('repository'));
    expect(stem('capitalisation')).toBe(stem('capitalization'));
    expect(stem('hottest')).toBe(stem('hot'));
    expect(stem('reviewers')).toBe(stem('review'));
    expect(stem('converter')).toBe(stem('convert'));
  });
});

describe('analyze', () => {
  it('should drop stop words when they carry no meaning', () => {
    expect(analyze('what is the weather in Paris')).toEqual([stem('weather'), 'paris']);
  });
});

describe('buildSynonymMap', () => {
  it('should relate the words of a group both ways when built', () => {
    const map = buildSynonymMap([['repo', 'repository']]);
    expect(map.get(stem('repo'))).toContain(stem('repository'));
    expect(map.get(stem('repository'))).toContain(stem('repo'));
  });
});
