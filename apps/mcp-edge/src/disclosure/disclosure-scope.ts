import { OrgCatalog } from '@tollgate/upstream-registry';
import { DisclosureScope, answerTokenCeiling } from '@tollgate/disclosure';
import { StoredPolicy, decideAccess } from '@tollgate/policy';

/** What a caller may discover (the tools its policies allow) and the policy ceiling on any answer. */
export function disclosureScopeFor(orgCatalog: OrgCatalog, levels: StoredPolicy[]): DisclosureScope {
  const allowed = new Set(
    orgCatalog.tools
      .filter((t) => decideAccess(levels, { namespace: t.namespace, tool: t.name }).allowed)
      .map((t) => t.exposedName),
  );
  const ceiling = answerTokenCeiling(levels);
  return { isVisible: (n) => allowed.has(n), ...(ceiling !== undefined ? { maxTokensCeiling: ceiling } : {}) };
}
