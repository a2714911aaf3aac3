import {
  AccessDecision,
  GovernedItemKind,
  ItemPolicyLevel,
  decideItemAccess,
  describeDecision,
} from './access-decision';

/**
 * What a resource URI means, for the resource policy: the upstream resolves `..` and
 * percent-encoding before it reads, so a glob matched on the raw URI can be walked around
 * (`file:///public/../secret/x`, `file:///public/%2e%2e/secret/x`). RFC 3986 normalisation
 * (6.2.2): scheme and host in lower case, percent-encoded unreserved characters decoded, other
 * percent-encodings in upper case, dot segments removed (5.2.4).
 */
export type NormalizedResourceUri = { ok: true; uri: string } | { ok: false; reason: string };

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
const UNRESERVED = /[A-Za-z0-9\-._~]/;

/**
 * The normalised form of `uri`, or why it cannot be decided: a URI whose meaning depends on how
 * the upstream decodes it (an encoded `/`, `\` or `%`, so one more decoding makes new path
 * segments), a backslash or control character, broken percent-encoding, or no scheme.
 */
export function normalizeResourceUri(uri: string): NormalizedResourceUri {
  if (/[\u0000-\u001f\u007f\\]/.test(uri)) return { ok: false, reason: 'it holds a backslash or a control character' };
  const scheme = SCHEME.exec(uri);
  if (!scheme) return { ok: false, reason: 'it is not an absolute URI (no scheme)' };
  let rest = uri.slice(scheme[0].length);
  let suffix = '';
  const end = rest.search(/[?#]/);
  if (end >= 0) {
    suffix = rest.slice(end);
    rest = rest.slice(0, end);
  }
  const hierarchical = decodeUnreserved(rest, true);
  if (!hierarchical.ok) return hierarchical;
  const tail = decodeUnreserved(suffix, false);
  if (!tail.ok) return tail;
  let authority = '';
  let path = hierarchical.uri;
  if (path.startsWith('//')) {
    const slash = path.indexOf('/', 2);
    authority = slash < 0 ? path : path.slice(0, slash);
    path = slash < 0 ? '' : path.slice(slash);
    // The host (after any userinfo) is case-insensitive.
    const at = authority.lastIndexOf('@');
    authority =
      at < 0 ? authority.toLowerCase() : `${authority.slice(0, at + 1)}${authority.slice(at + 1).toLowerCase()}`;
  }
  return { ok: true, uri: `${scheme[1].toLowerCase()}:${authority}${removeDotSegments(path)}${tail.uri}` };
}

// Decodes percent-encoded unreserved characters and upper-cases the other encodings. In the
// hierarchical part an encoded `/`, `\` or `%` is refused: decoded once more, it would be a new path segment.
function decodeUnreserved(part: string, hierarchical: boolean): NormalizedResourceUri {
  let out = '';
  for (let i = 0; i < part.length; i++) {
    const c = part[i];
    if (c !== '%') {
      out += c;
      continue;
    }
    const hex = part.slice(i + 1, i + 3);
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return { ok: false, reason: `"%${hex}" is not a percent-encoding` };
    const code = parseInt(hex, 16);
    const char = String.fromCharCode(code);
    if (code < 0x20 || code === 0x7f) return { ok: false, reason: `it encodes a control character (%${hex})` };
    if (hierarchical && (char === '/' || char === '\\' || char === '%'))
      return { ok: false, reason: `it encodes "${char}" (%${hex}) in its path, which upstreams decode differently` };
    out += UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
    i += 2;
  }
  return { ok: true, uri: out };
}

/** RFC 3986 5.2.4. */
function removeDotSegments(path: string): string {
  let input = path;
  const output: string[] = [];
  while (input.length > 0) {
    if (input.startsWith('../')) input = input.slice(3);
    else if (input.startsWith('./')) input = input.slice(2);
    else if (input.startsWith('/./')) input = input.slice(2);
    else if (input === '/.') input = '/';
    else if (input.startsWith('/../')) {
      input = input.slice(3);
      output.pop();
    } else if (input === '/..') {
      input = '/';
      output.pop();
    } else if (input === '.' || input === '..') input = '';
    else {
      const next = input.indexOf('/', input.startsWith('/') ? 1 : 0);
      const segment = next < 0 ? input : input.slice(0, next);
      output.push(segment);
      input = next < 0 ? '' : input.slice(next);
    }
  }
  return output.join('');
}

/** A resource decision: the policy's, on the normalised URI, or a URI that cannot be decided. */
export type ResourceDecision = AccessDecision | { allowed: false; reason: 'UNDECIDABLE_URI'; detail: string };

/** The resource policy's decision for `uri` of the upstream `namespace`, made on the normalised URI. */
export function decideResourceAccess(
  levels: readonly ItemPolicyLevel[],
  namespace: string,
  uri: string,
): ResourceDecision {
  const normalized = normalizeResourceUri(uri);
  if (!normalized.ok) return { allowed: false, reason: 'UNDECIDABLE_URI', detail: normalized.reason };
  return decideItemAccess(levels, 'resource', { namespace, tool: normalized.uri });
}

export function describeResourceDecision(decision: ResourceDecision, kind: GovernedItemKind = 'resource'): string {
  if (!decision.allowed && decision.reason === 'UNDECIDABLE_URI')
    return `the URI cannot be decided by the resource policy: ${decision.detail}`;
  return describeDecision(decision, kind);
}
