import { describe, expect, it } from 'vitest';
import { broadestFirst, decideAccess, decideItemAccess, effectiveOutputLimits, PolicyLevel } from './access-decision';
import { isValidResourcePattern } from './resource-pattern';

const ref = { namespace: 'github', tool: 'delete_repo' };

describe('access decisions', () => {
  it('should deny everything when no level has an allow list', () => {
    expect(decideAccess([], ref)).toEqual({ allowed: false, reason: 'NO_ALLOW_LIST' });
  });

  it('should allow a tool the org allows and nobody denies', () => {
    expect(decideAccess([{ scope: 'ORG', allow: ['github:*'], deny: [] }], ref)).toEqual({ allowed: true });
  });

  it('should let a deny at any level win over an allow at another', () => {
    const levels: PolicyLevel[] = [
      { scope: 'ORG', allow: ['github:*'], deny: [] },
      { scope: 'KEY', allow: ['github:*'], deny: ['github:delete_*'] },
    ];
    expect(decideAccess(levels, ref)).toEqual({
      allowed: false,
      reason: 'DENIED_BY_RULE',
      scope: 'KEY',
      rule: 'github:delete_*',
    });
  });

  it('should only let a lower level narrow, never widen, what the level above allows', () => {
    const levels: PolicyLevel[] = [
      { scope: 'ORG', allow: ['github:list_*'], deny: [] },
      { scope: 'TEAM', allow: ['github:*'], deny: [] },
    ];
    expect(decideAccess(levels, ref)).toEqual({ allowed: false, reason: 'NOT_IN_ALLOW_LIST', scope: 'ORG' });
    expect(decideAccess(levels, { namespace: 'github', tool: 'list_repos' })).toEqual({ allowed: true });
  });

  it('should report the level whose allow list left the tool out', () => {
    const levels: PolicyLevel[] = [
      { scope: 'ORG', allow: ['*'], deny: [] },
      { scope: 'USER', allow: ['jira:*'], deny: [] },
    ];
    expect(decideAccess(levels, ref)).toEqual({ allowed: false, reason: 'NOT_IN_ALLOW_LIST', scope: 'USER' });
  });

  it('should decide from the broadest level down whatever order the levels come in', () => {
    const levels: PolicyLevel[] = [
      { scope: 'KEY', allow: ['*'], deny: ['github:*'] },
      { scope: 'ORG', allow: ['*'], deny: ['github:delete_*'] },
    ];
    expect(decideAccess(levels, ref)).toEqual({
      allowed: false,
      reason: 'DENIED_BY_RULE',
      scope: 'ORG',
      rule: 'github:delete_*',
    });
    // Ordered levels are used as they are; others are sorted in a copy, the caller's array untouched.
    const ordered = broadestFirst([...levels].reverse());
    expect(broadestFirst(ordered)).toBe(ordered);
    expect(broadestFirst(levels).map((l) => l.scope)).toEqual(['ORG', 'KEY']);
    expect(levels.map((l) => l.scope)).toEqual(['KEY', 'ORG']);
  });
});

describe('effective output limits', () => {
  it('should take the tightest cap of any level and the most specific overflow setting', () => {
    expect(effectiveOutputLimits([])).toEqual({ cap: null, overflow: 'PAGE' });
    expect(
      effectiveOutputLimits([
        { scope: 'ORG', outputTokenCap: 4000, outputOverflow: 'REFUSE' },
        { scope: 'KEY', outputTokenCap: 8000, outputOverflow: 'PAGE' },
        { scope: 'TEAM', outputTokenCap: 2000, outputOverflow: null },
      ]),
    ).toEqual({ cap: 2000, overflow: 'PAGE' });
    expect(effectiveOutputLimits([{ scope: 'ORG', outputTokenCap: null, outputOverflow: 'REFUSE' }])).toEqual({
      cap: null,
      overflow: 'REFUSE',
    });
    // Two levels of the most specific scope that says: the first of them, as before.
    expect(
      effectiveOutputLimits([
        { scope: 'USER', outputTokenCap: null, outputOverflow: 'REFUSE' },
        { scope: 'ORG', outputTokenCap: 0, outputOverflow: 'PAGE' },
        { scope: 'USER', outputTokenCap: 10, outputOverflow: 'PAGE' },
      ]),
    ).toEqual({ cap: 0, overflow: 'REFUSE' });
  });

  it('should decide resources and prompts over their own lists, a URI glob spanning colons and slashes', () => {
    const levels = [
      {
        scope: 'ORG' as const,
        allow: ['docs:*'],
        deny: [],
        resourceAllow: ['docs:test://*'],
        resourceDeny: ['docs:test://secret/*'],
        promptAllow: ['docs:*'],
        promptDeny: ['docs:internal_*'],
      },
    ];
    expect(decideItemAccess(levels, 'resource', { namespace: 'docs', tool: 'test://static-text' })).toEqual({
      allowed: true,
    });
    expect(decideItemAccess(levels, 'resource', { namespace: 'docs', tool: 'test://secret/a' })).toEqual({
      allowed: false,
      reason: 'DENIED_BY_RULE',
      scope: 'ORG',
      rule: 'docs:test://secret/*',
    });
    expect(decideItemAccess(levels, 'resource', { namespace: 'docs', tool: 'file:///x' })).toMatchObject({
      allowed: false,
      reason: 'NOT_IN_ALLOW_LIST',
    });
    expect(decideItemAccess(levels, 'prompt', { namespace: 'docs', tool: 'greet' })).toEqual({ allowed: true });
    expect(decideItemAccess(levels, 'prompt', { namespace: 'docs', tool: 'internal_x' })).toMatchObject({
      allowed: false,
      reason: 'DENIED_BY_RULE',
    });
    // A tool allow list says nothing about resources: default deny.
    expect(
      decideItemAccess([{ ...levels[0], resourceAllow: [], resourceDeny: [] }], 'resource', {
        namespace: 'docs',
        tool: 'test://a',
      }),
    ).toEqual({ allowed: false, reason: 'NO_ALLOW_LIST' });
    expect(isValidResourcePattern('docs:file:///reports/*')).toBe(true);
    expect(isValidResourcePattern('docs:has space')).toBe(false);
  });
});
