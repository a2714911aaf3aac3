import { describe, expect, it } from 'vitest';
import { accessChangeOf, patchPatternList } from './policy-change';

describe('policy changes', () => {
  it('should remove, then add patterns not already present, keeping the written order', () => {
    expect(patchPatternList(['a:*', 'b:x'], { add: ['c:*', 'a:*'], remove: ['b:x'] })).toEqual(['a:*', 'c:*']);
    expect(patchPatternList(['a:*'], undefined)).toEqual(['a:*']);
  });

  it('should list the tools a key gains and loses when one level is replaced', () => {
    const tools = [
      { namespace: 'gh', tool: 'search', exposedName: 'gh__search' },
      { namespace: 'gh', tool: 'delete', exposedName: 'gh__delete' },
    ];
    const levels = [
      { scope: 'ORG' as const, scopeId: 'o', allow: ['gh:*'], deny: [] },
      { scope: 'TEAM' as const, scopeId: 't', allow: [], deny: ['gh:delete'] },
    ];
    expect(accessChangeOf(tools, levels, 'TEAM', 't', { scope: 'TEAM', allow: [], deny: ['gh:search'] })).toEqual({
      gained: ['gh__delete'],
      lost: ['gh__search'],
    });
    expect(accessChangeOf(tools, levels, 'TEAM', 't', null)).toEqual({ gained: ['gh__delete'], lost: [] });
    expect(accessChangeOf(tools, levels, 'KEY', 'k', { scope: 'KEY', allow: ['gh:search'], deny: [] })).toEqual({
      gained: [],
      lost: [],
    });
  });
});
