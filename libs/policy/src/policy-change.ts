import { ToolRef } from '@tollgate/kernel';
import { PolicyLevel, PolicyScope, decideAccess } from './access-decision';

/** Patterns added to and removed from one list of a policy. */
export interface PatternListPatch {
  add?: readonly string[];
  remove?: readonly string[];
}

export const PATCHABLE_LISTS = [
  'allow',
  'deny',
  'autoExecute',
  'resourceAllow',
  'resourceDeny',
  'promptAllow',
  'promptDeny',
] as const;
export type PatchableList = (typeof PATCHABLE_LISTS)[number];

/** A list after a patch: removals first, then additions not already present, in the order written. */
export function patchPatternList(current: readonly string[], patch: PatternListPatch | undefined): string[] {
  if (!patch) return [...current];
  const removed = new Set(patch.remove ?? []);
  const next = current.filter((p) => !removed.has(p));
  for (const p of patch.add ?? []) if (!next.includes(p)) next.push(p);
  return next;
}

/** A level of a key's policy stack, as the dry run compares it. */
export interface DryRunLevel extends PolicyLevel {
  scopeId: string;
}

/** What one key would gain and lose, by exposed tool name. */
export interface AccessChange {
  gained: string[];
  lost: string[];
}

/**
 * The tools a key would gain or lose when one level of its stack (`scope`/`scopeId`) is replaced
 * by `proposed` (null: no policy at that level), decided by the edge's own `decideAccess`.
 */
export function accessChangeOf(
  tools: readonly (ToolRef & { exposedName: string })[],
  levels: readonly DryRunLevel[],
  scope: PolicyScope,
  scopeId: string,
  proposed: PolicyLevel | null,
): AccessChange {
  const after = levels.filter((l) => !(l.scope === scope && l.scopeId === scopeId));
  if (proposed) after.push({ ...proposed, scope, scopeId });
  const change: AccessChange = { gained: [], lost: [] };
  for (const t of tools) {
    const ref = { namespace: t.namespace, tool: t.tool };
    const was = decideAccess(levels, ref).allowed;
    const will = decideAccess(after, ref).allowed;
    if (!was && will) change.gained.push(t.exposedName);
    if (was && !will) change.lost.push(t.exposedName);
  }
  return change;
}
