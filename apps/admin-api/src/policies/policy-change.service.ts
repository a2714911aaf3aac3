import type { AuditedBy } from '@tollgate/audit';
import { Injectable } from '@nestjs/common';
import { ToolCatalogService } from '@tollgate/upstream-registry';
import { AccessPolicy, PrismaService } from '@tollgate/db';
import { StaleWriteException } from '@tollgate/kernel';
import {
  DryRunLevel,
  PATCHABLE_LISTS,
  PolicyAdminException,
  PolicyAdminExceptionCode,
  findInvalidPattern,
  PatchableList,
  PatternListPatch,
  PolicyAdminService,
  PolicyScope,
  PolicyService,
  PutPolicyInput,
  accessChangeOf,
  patchPatternList,
} from '@tollgate/policy';
import type { KeyAccessChangeView, PolicyDryRunView } from './patch-policy.dto';

export type PolicyPatch = Partial<Record<PatchableList, PatternListPatch>>;

// Without If-Match a PATCH still never loses a concurrent one: it re-reads and retries on a stale write.
const PATCH_ATTEMPTS = 5;
// The dry run compares at most this many keys (the answer lists only keys that change).
const MAX_DRY_RUN_KEYS = 5000;

/** PATCH-style changes of one level's policy, and the dry run that shows their effect per key. */
@Injectable()
export class PolicyChangeService {
  constructor(
    private readonly admin: PolicyAdminService,
    private readonly policies: PolicyService,
    private readonly catalogs: ToolCatalogService,
    private readonly prisma: PrismaService,
  ) {}

  async patchPolicy(
    orgId: string,
    scope: PolicyScope,
    scopeId: string,
    patch: PolicyPatch,
    audit: AuditedBy<AccessPolicy>,
    ifMatch?: number,
  ): Promise<AccessPolicy> {
    assertValidPatch(patch);
    for (let attempt = 1; ; attempt++) {
      const current = await this.admin.getPolicy(orgId, scope, scopeId);
      if (ifMatch !== undefined && current?.version !== ifMatch)
        throw new StaleWriteException('policy', ifMatch, current?.version ?? null);
      try {
        return await this.admin.putPolicy(orgId, scope, scopeId, applyPatch(current, patch), audit, current?.version);
      } catch (err) {
        if (!(err instanceof StaleWriteException) || ifMatch !== undefined || attempt === PATCH_ATTEMPTS) throw err;
      }
    }
  }

  /** The policy the level would get, and per active key under it the tools it would gain or lose. Nothing is written. */
  async dryRun(
    orgId: string,
    scope: PolicyScope,
    scopeId: string,
    replace: PutPolicyInput | undefined,
    patch: PolicyPatch,
  ): Promise<PolicyDryRunView> {
    assertValidPatch(patch);
    const current = await this.admin.getPolicy(orgId, scope, scopeId);
    const base = replace ? ({ ...EMPTY_POLICY, ...replace } as PutPolicyInput) : toInput(current);
    const proposed = applyPatch(base, patch);
    const catalog = await this.catalogs.catalogFor(orgId);
    const tools = catalog.tools.map((t) => ({ namespace: t.namespace, tool: t.name, exposedName: t.exposedName }));
    const now = new Date();
    const keys = await this.prisma.virtualKey.findMany({
      where: {
        orgId,
        revokedAt: null,
        OR: [{ expiresAt: null }, { expiresAt: { gt: now } }],
        ...(scope === 'TEAM'
          ? { teamId: scopeId }
          : scope === 'USER'
            ? { userId: scopeId }
            : scope === 'KEY'
              ? { id: scopeId }
              : {}),
      },
      select: { id: true, name: true, teamId: true, userId: true },
      orderBy: { createdAt: 'asc' },
      take: MAX_DRY_RUN_KEYS,
    });
    const changes: KeyAccessChangeView[] = [];
    for (const key of keys) {
      const levels: DryRunLevel[] = await this.policies.levelsFor({
        orgId,
        teamId: key.teamId,
        userId: key.userId,
        keyId: key.id,
      });
      const change = accessChangeOf(tools, levels, scope, scopeId, {
        scope,
        allow: proposed.allow,
        deny: proposed.deny,
      });
      if (change.gained.length + change.lost.length > 0)
        changes.push({ keyId: key.id, keyName: key.name, teamId: key.teamId, userId: key.userId, ...change });
    }
    return { scope, scopeId, allow: proposed.allow, deny: proposed.deny, keysEvaluated: keys.length, changes };
  }
}

const EMPTY_POLICY: PutPolicyInput = { allow: [], deny: [] };

function toInput(p: AccessPolicy | null): PutPolicyInput {
  if (!p) return { ...EMPTY_POLICY };
  return {
    allow: p.allow,
    deny: p.deny,
    autoExecute: p.autoExecute,
    resourceAllow: p.resourceAllow,
    resourceDeny: p.resourceDeny,
    promptAllow: p.promptAllow,
    promptDeny: p.promptDeny,
    disclosureMode: p.disclosureMode,
    maxAnswerTokens: p.maxAnswerTokens,
    maxSessionSchemaTokens: p.maxSessionSchemaTokens,
    outputTokenCap: p.outputTokenCap,
    outputOverflow: p.outputOverflow,
  };
}

function applyPatch(current: AccessPolicy | PutPolicyInput | null, patch: PolicyPatch): PutPolicyInput {
  const input =
    current && 'id' in current ? toInput(current) : ((current as PutPolicyInput | null) ?? { ...EMPTY_POLICY });
  const next: PutPolicyInput = { ...input };
  for (const list of PATCHABLE_LISTS) next[list] = patchPatternList(input[list] ?? [], patch[list]);
  return next;
}

/** Names the bad pattern by its place in the request (`allow.add[1]`), not in the merged list. */
function assertValidPatch(patch: PolicyPatch): void {
  for (const list of ['allow', 'deny', 'autoExecute', 'promptAllow', 'promptDeny'] as const) {
    const bad = findInvalidPattern(`${list}.add`, patch[list]?.add ?? []);
    if (bad) throw new PolicyAdminException(PolicyAdminExceptionCode.InvalidPattern, bad.message, bad.field);
  }
}
