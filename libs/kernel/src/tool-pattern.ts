import { ToolRef, toolRefKey } from './tool-ref';

/**
 * A `namespace:tool` glob (`github:*`, `*:search_*`, `everything:echo`). `*` matches any run of
 * characters except `:`, `?` one character. A pattern without a colon means every tool of the
 * namespaces it matches.
 */
export type ToolPattern = string;

const TOOL_PATTERN_SYNTAX = /^[A-Za-z0-9_*?.\-/]+(?::[A-Za-z0-9_*?.\-/]+)?$/;

export function isValidToolPattern(pattern: string): boolean {
  return pattern.length > 0 && pattern.length <= 200 && TOOL_PATTERN_SYNTAX.test(pattern);
}

const compiled = new Map<string, RegExp>();

function globToRegExp(pattern: ToolPattern): RegExp {
  let re = compiled.get(pattern);
  if (!re) {
    const full = pattern.includes(':') ? pattern : `${pattern}:*`;
    const body = full
      .split('')
      .map((c) => (c === '*' ? '[^:]*' : c === '?' ? '[^:]' : c.replace(/[.+^${}()|[\]\\/-]/g, '\\$&')))
      .join('');
    re = new RegExp(`^${body}$`);
    compiled.set(pattern, re);
  }
  return re;
}

export function matchesToolPattern(pattern: ToolPattern, ref: ToolRef): boolean {
  return globToRegExp(pattern).test(toolRefKey(ref));
}

/** The first pattern of the list that matches, or undefined. */
export function firstMatchingPattern(patterns: readonly ToolPattern[], ref: ToolRef): ToolPattern | undefined {
  return patterns.find((p) => matchesToolPattern(p, ref));
}

/**
 * How specific a pattern is: literal characters count, wildcards do not. Used to pick the most
 * specific of several matching rules (an exact tool beats `search_*`, which beats `*`).
 */
export function patternSpecificity(pattern: string): number {
  return pattern.replace(/[*?]/g, '').length;
}
