import { describe, expect, it } from 'vitest';
import { MAX_INPUT_DEPTH, findBadInput, textProblem } from './input-text';

function nested(levels: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

describe('findBadInput', () => {
  it('should pass clean input, including paired surrogates (emoji)', () => {
    expect(
      findBadInput({ name: 'Acme 😀', allow: ['a:*'], headers: { 'X-Key': 'v' }, n: 1, b: null }, 'body'),
    ).toBeNull();
  });

  it('should name the JSON path of a NUL byte', () => {
    expect(findBadInput({ name: 'a\u0000b' }, 'body')).toEqual({
      path: 'name',
      message: 'name must not contain a NUL character (\\u0000)',
    });
    expect(findBadInput({ oauth: { scope: '\u0000' } }, 'body')?.path).toBe('oauth.scope');
    expect(findBadInput({ allow: ['ok', 'x\u0000'] }, 'body')?.path).toBe('allow[1]');
    expect(findBadInput({ headers: { 'X-Api-Key': '\u0000' } }, 'body')?.path).toBe('headers["X-Api-Key"]');
  });

  it('should name a lone surrogate, high or low', () => {
    expect(findBadInput({ name: 'a\ud800b' }, 'body')).toMatchObject({
      path: 'name',
      message: expect.stringContaining('unpaired surrogate'),
    });
    expect(findBadInput({ name: '\udc00' }, 'body')?.path).toBe('name');
    expect(textProblem('😀')).toBeNull();
  });

  it('should name a property name that holds a NUL byte, escaped', () => {
    expect(findBadInput({ ['a\u0000']: 1 }, 'body')).toMatchObject({
      path: '["a\\u0000"]',
      message: expect.stringContaining('property name'),
    });
  });

  it('should name the root when it is itself the bad string', () => {
    expect(findBadInput('\u0000', 'body')?.path).toBe('body');
  });

  it('should refuse nesting past the limit without recursion, even 100,000 levels deep', () => {
    expect(findBadInput(nested(MAX_INPUT_DEPTH), 'body')).toBeNull();
    expect(findBadInput(nested(MAX_INPUT_DEPTH + 1), 'body')?.message).toContain(
      `nested deeper than ${MAX_INPUT_DEPTH} levels`,
    );
    const deep = JSON.parse(`{"name":${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
    expect(findBadInput(deep, 'body')).toMatchObject({
      path: expect.stringMatching(/^name(\[0\])+$/),
      message: expect.stringContaining('nested deeper'),
    });
  });
});
