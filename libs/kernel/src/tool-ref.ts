/**
 * Agents see upstream tools as `<namespace>__<tool>`; admins write patterns as `namespace:tool`.
 * Namespaces are lower-case letters, digits and single hyphens, so the first `__` always splits.
 */
export const NAMESPACE_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const EXPOSED_NAME_SEPARATOR = '__';

export interface ToolRef {
  namespace: string;
  tool: string;
}

export function exposedToolName(ref: ToolRef): string {
  return `${ref.namespace}${EXPOSED_NAME_SEPARATOR}${ref.tool}`;
}

export function parseExposedToolName(name: string): ToolRef | null {
  const at = name.indexOf(EXPOSED_NAME_SEPARATOR);
  if (at <= 0) return null;
  const namespace = name.slice(0, at);
  const tool = name.slice(at + EXPOSED_NAME_SEPARATOR.length);
  if (!NAMESPACE_PATTERN.test(namespace) || tool.length === 0) return null;
  return { namespace, tool };
}

export function toolRefKey(ref: ToolRef): string {
  return `${ref.namespace}:${ref.tool}`;
}
