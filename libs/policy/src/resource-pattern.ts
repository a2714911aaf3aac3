/**
 * A `namespace:uri` glob for resources (`everything:*`, `docs:file:///reports/*`, `*:test://*`).
 * Unlike tool patterns, `*` in the URI part spans any characters (URIs hold `:` and `/`); in the
 * namespace part it spans any run without `:`. A pattern without a colon means every resource of
 * the namespaces it matches.
 */
const RESOURCE_PATTERN_SYNTAX = /^[a-z0-9*?-]+(?::\S+)?$/;

export function isValidResourcePattern(pattern: string): boolean {
  return pattern.length > 0 && pattern.length <= 500 && RESOURCE_PATTERN_SYNTAX.test(pattern);
}

const compiled = new Map<string, RegExp>();

function escape(c: string): string {
  return c.replace(/[.+^${}()|[\]\\/-]/g, '\\$&');
}

function resourceGlob(pattern: string): RegExp {
  let re = compiled.get(pattern);
  if (!re) {
    const colon = pattern.indexOf(':');
    const ns = colon < 0 ? pattern : pattern.slice(0, colon);
    const uri = colon < 0 ? '*' : pattern.slice(colon + 1);
    const nsBody = ns
      .split('')
      .map((c) => (c === '*' ? '[^:]*' : c === '?' ? '[^:]' : escape(c)))
      .join('');
    const uriBody = uri
      .split('')
      .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : escape(c)))
      .join('');
    re = new RegExp(`^${nsBody}:${uriBody}$`, 's');
    compiled.set(pattern, re);
  }
  return re;
}

/** The first resource pattern of the list that matches the upstream's namespace and the resource's URI. */
export function firstMatchingResourcePattern(
  patterns: readonly string[],
  ref: { namespace: string; tool: string },
): string | undefined {
  return patterns.find((p) => resourceGlob(p).test(`${ref.namespace}:${ref.tool}`));
}
