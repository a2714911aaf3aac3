import { exposedToolName } from '@tollgate/kernel';

/**
 * How agents address an upstream's items. Tools and prompts are `<namespace>__<name>`, or the bare
 * name for an upstream exposed unprefixed; resource URIs are kept intact. A URI that two upstreams
 * both list, and any URI an agent wants to pin to one upstream, is written
 * `tollgate://<namespace>/<original uri>` (namespaces are `[a-z0-9-]`, so the first `/` splits).
 */
export const NAMESPACED_URI_SCHEME = 'tollgate://';

export function namespacedUri(namespace: string, uri: string): string {
  return `${NAMESPACED_URI_SCHEME}${namespace}/${uri}`;
}

/** The namespace and original URI of a `tollgate://<namespace>/<uri>`, or null for any other URI. */
export function parseNamespacedUri(uri: string): { namespace: string; uri: string } | null {
  if (!uri.startsWith(NAMESPACED_URI_SCHEME)) return null;
  const rest = uri.slice(NAMESPACED_URI_SCHEME.length);
  const slash = rest.indexOf('/');
  if (slash <= 0 || slash === rest.length - 1) return null;
  return { namespace: rest.slice(0, slash), uri: rest.slice(slash + 1) };
}

export interface ExposableName {
  namespace: string;
  name: string;
  unprefixed: boolean;
}

/**
 * The name each tool (or prompt) is exposed under. A prefixed name is always its own; an unprefixed
 * upstream's name is bare unless another item is exposed under it too, in which case every bare
 * claimant falls back to its prefixed name (listed in `collisions`), so no name ever routes to two.
 */
export function exposedNames<T extends ExposableName>(
  items: readonly T[],
): { names: Map<T, string>; collisions: string[] } {
  const claims = new Map<string, T[]>();
  const prefixed = new Set(
    items.filter((i) => !i.unprefixed).map((i) => exposedToolName({ namespace: i.namespace, tool: i.name })),
  );
  for (const i of items) {
    if (!i.unprefixed) continue;
    const list = claims.get(i.name) ?? [];
    list.push(i);
    claims.set(i.name, list);
  }
  const names = new Map<T, string>();
  const collisions: string[] = [];
  for (const i of items) {
    const full = exposedToolName({ namespace: i.namespace, tool: i.name });
    if (!i.unprefixed) names.set(i, full);
    else if ((claims.get(i.name)?.length ?? 0) > 1 || prefixed.has(i.name)) {
      names.set(i, full);
      collisions.push(i.name);
    } else names.set(i, i.name);
  }
  return { names, collisions: [...new Set(collisions)].sort() };
}

/**
 * The URI each listed resource (or template) is exposed under: intact when one upstream lists it,
 * `tollgate://<namespace>/<uri>` for each upstream when several do.
 */
export function exposedUris<T extends { namespace: string; uri: string }>(items: readonly T[]): Map<T, string> {
  const count = new Map<string, number>();
  for (const i of items) count.set(i.uri, (count.get(i.uri) ?? 0) + 1);
  return new Map(items.map((i) => [i, (count.get(i.uri) ?? 0) > 1 ? namespacedUri(i.namespace, i.uri) : i.uri]));
}
