import { stableStringify } from '@tollgate/kernel';
import { ToolDefinition } from './tool-definition';

/** One input parameter whose schema differs between the pinned and the latest definition. */
export interface ChangedProperty {
  name: string;
  before: unknown;
  after: unknown;
}

/** What changed between the definition the edge serves (pinned) and the one the upstream lists. */
export interface ToolDefinitionDiff {
  /** Null for a tool that was never approved: everything in `after` is new. */
  pinnedHash: string | null;
  definitionHash: string;
  title: { before: string | null; after: string | null } | null;
  description: { before: string | null; after: string | null } | null;
  inputSchema: {
    added: string[];
    removed: string[];
    changed: ChangedProperty[];
    required: { before: string[]; after: string[] } | null;
  };
  /** Other parts (output schema, annotations, schema keywords besides properties) differ. */
  otherChanges: string[];
  changed: boolean;
}

type Schema = Record<string, unknown>;

/**
 * A structured diff of two tool definitions: description and title, input-schema properties
 * added, removed and changed (compared as canonical JSON), required lists, and which other
 * parts differ.
 */
export function diffToolDefinitions(
  pinned: ToolDefinition | null,
  latest: ToolDefinition,
  hashes: { pinnedHash: string | null; definitionHash: string },
): ToolDefinitionDiff {
  const before: Partial<ToolDefinition> = pinned ?? {};
  const text = (a: string | undefined, b: string | undefined) =>
    (a ?? null) === (b ?? null) ? null : { before: a ?? null, after: b ?? null };
  const beforeSchema = (before.inputSchema ?? {}) as Schema;
  const afterSchema = (latest.inputSchema ?? {}) as Schema;
  const beforeProps = props(beforeSchema);
  const afterProps = props(afterSchema);
  const added = Object.keys(afterProps)
    .filter((k) => !(k in beforeProps))
    .sort();
  const removed = Object.keys(beforeProps)
    .filter((k) => !(k in afterProps))
    .sort();
  const changed = Object.keys(afterProps)
    .filter((k) => k in beforeProps && stableStringify(beforeProps[k]) !== stableStringify(afterProps[k]))
    .sort()
    .map((name) => ({ name, before: beforeProps[name], after: afterProps[name] }));
  const requiredBefore = requiredOf(beforeSchema);
  const requiredAfter = requiredOf(afterSchema);
  const required =
    stableStringify(requiredBefore) === stableStringify(requiredAfter)
      ? null
      : { before: requiredBefore, after: requiredAfter };

  const otherChanges: string[] = [];
  const rest = (s: Schema) =>
    Object.fromEntries(Object.entries(s).filter(([k]) => k !== 'properties' && k !== 'required'));
  if (stableStringify(rest(beforeSchema)) !== stableStringify(rest(afterSchema))) otherChanges.push('inputSchema');
  if (stableStringify(before.outputSchema ?? null) !== stableStringify(latest.outputSchema ?? null))
    otherChanges.push('outputSchema');
  if (stableStringify(before.annotations ?? null) !== stableStringify(latest.annotations ?? null))
    otherChanges.push('annotations');

  const diff: ToolDefinitionDiff = {
    pinnedHash: hashes.pinnedHash,
    definitionHash: hashes.definitionHash,
    title: text(before.title, latest.title),
    description: text(before.description, latest.description),
    inputSchema: { added, removed, changed, required },
    otherChanges,
    changed: false,
  };
  diff.changed = hashes.pinnedHash !== hashes.definitionHash;
  return diff;
}

function props(schema: Schema): Record<string, unknown> {
  const p = schema['properties'];
  return p && typeof p === 'object' && !Array.isArray(p) ? (p as Record<string, unknown>) : {};
}

function requiredOf(schema: Schema): string[] {
  const r = schema['required'];
  return Array.isArray(r) ? r.filter((x): x is string => typeof x === 'string').sort() : [];
}
