import { describe, expect, it } from 'vitest';
import { isValidToolPattern, matchesToolPattern, patternSpecificity } from './tool-pattern';
import { exposedToolName, parseExposedToolName } from './tool-ref';

const ref = (namespace: string, tool: string) => ({ namespace, tool });

describe('tool patterns', () => {
  it('should match exact tools, namespace globs and tool globs', () => {
    expect(matchesToolPattern('github:create_issue', ref('github', 'create_issue'))).toBe(true);
    expect(matchesToolPattern('github:*', ref('github', 'create_issue'))).toBe(true);
    expect(matchesToolPattern('github', ref('github', 'anything'))).toBe(true);
    expect(matchesToolPattern('*:search_*', ref('docs', 'search_pages'))).toBe(true);
    expect(matchesToolPattern('*:search_*', ref('docs', 'list_pages'))).toBe(false);
    expect(matchesToolPattern('git?ub:*', ref('github', 'x'))).toBe(true);
  });

  it('should not let a wildcard cross from the tool into the namespace', () => {
    expect(matchesToolPattern('git*', ref('gitlab', 'x'))).toBe(true);
    expect(matchesToolPattern('github:*', ref('github-enterprise', 'x'))).toBe(false);
  });

  it('should treat regex metacharacters literally', () => {
    expect(matchesToolPattern('a.b:c', ref('a.b', 'c'))).toBe(true);
    expect(matchesToolPattern('a.b:c', ref('axb', 'c'))).toBe(false);
  });

  it('should reject malformed patterns', () => {
    expect(isValidToolPattern('github:*')).toBe(true);
    expect(isValidToolPattern('')).toBe(false);
    expect(isValidToolPattern('a:b:c')).toBe(false);
    expect(isValidToolPattern('rm -rf')).toBe(false);
  });

  it('should rank exact names above globs', () => {
    expect(patternSpecificity('echo')).toBeGreaterThan(patternSpecificity('ec*'));
    expect(patternSpecificity('ec*')).toBeGreaterThan(patternSpecificity('*'));
  });

  it('should round-trip exposed names and split at the first double underscore', () => {
    expect(exposedToolName(ref('mem', 'read_graph'))).toBe('mem__read_graph');
    expect(parseExposedToolName('mem__read__graph')).toEqual(ref('mem', 'read__graph'));
    expect(parseExposedToolName('noseparator')).toBeNull();
    expect(parseExposedToolName('Bad_NS__x')).toBeNull();
  });
});
