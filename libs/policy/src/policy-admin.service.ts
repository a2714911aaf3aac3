import { AuditedBy, recordAudited } from '@tollgate/audit';
import { Injectable } from '@nestjs/common';
import { AccessPolicy, Prisma, PrismaService, scopeBelongsToOrg } from '@tollgate/db';
import { StaleWriteException, isValidToolPattern } from '@tollgate/kernel';
import { isValidResourcePattern } from './resource-pattern';
import { ORG_CONFIG_CHANGED_CHANNEL, RedisService } from '@tollgate/redis';
import { PolicyScope } from './access-decision';
import { PolicyAdminException, PolicyAdminExceptionCode } from './policy-admin.exception';

export interface PutPolicyInput {
  allow: string[];
  deny: string[];
  autoExecute?: string[];
  /** `namespace:uri` globs (`*` spans any characters in the URI); empty by default: no resource allowed. */
  resourceAllow?: string[];
  resourceDeny?: string[];
  /** `namespace:prompt` globs, like tool patterns; empty by default: no prompt allowed. */
  promptAllow?: string[];
  promptDeny?: string[];
  disclosureMode?: 'FULL' | 'PROGRESSIVE' | 'CODE' | 'AUTO' | null;
  maxAnswerTokens?: number | null;
  maxSessionSchemaTokens?: number | null;
  outputTokenCap?: number | null;
  outputOverflow?: 'PAGE' | 'REFUSE' | null;
}

/** The columns a write sets: every list and setting of the policy. */
type PolicyColumns = Omit<AccessPolicy, 'id' | 'orgId' | 'scope' | 'scopeId' | 'version' | 'createdAt' | 'updatedAt'>;

/** Most patterns one list may hold: the edge matches every call against them. */
export const MAX_PATTERNS_PER_LIST = 500;

/**
 * The first invalid entry of a pattern list as `{ field, message }` (field like `allow[2]`),
 * or null when every entry is a valid `namespace:tool` glob.
 */
export function findInvalidPattern(
  listName: string,
  patterns: readonly string[],
  kind: 'tool' | 'resource' = 'tool',
): { field: string; message: string } | null {
  if (patterns.length > MAX_PATTERNS_PER_LIST) {
    return {
      field: listName,
      message: `${listName} holds ${patterns.length} patterns; at most ${MAX_PATTERNS_PER_LIST} are allowed`,
    };
  }
  for (let i = 0; i < patterns.length; i++) {
    const p = patterns[i];
    if (kind === 'resource' && (typeof p !== 'string' || !isValidResourcePattern(p))) {
      return {
        field: `${listName}[${i}]`,
        message: `${listName}[${i}] "${String(p)}" is not a valid resource pattern (expected namespace:uri globs such as "docs:*" or "docs:file:///reports/*")`,
      };
    }
    if (kind === 'tool' && (typeof p !== 'string' || !isValidToolPattern(p))) {
      return {
        field: `${listName}[${i}]`,
        message: `${listName}[${i}] "${String(p)}" is not a valid tool pattern (expected namespace:tool globs such as "github:*" or "*:search_*")`,
      };
    }
  }
  return null;
}

/** Drops duplicates, keeping the first occurrence, so a list reads as the admin wrote it. */
function dedupe(patterns: readonly string[]): string[] {
  return [...new Set(patterns)];
}

/**
 * Admin-side writes of access policies: one policy per org/team/user/key, replaced as a whole.
 * Every change is announced on `org-config-changed` so edges drop their cached policies.
 */
@Injectable()
export class PolicyAdminService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
  ) {}

  /**
   * Creates or replaces the policy of one scope; the scope must belong to the organisation. With
   * `expectedVersion` the write applies only to that version of the policy (else StaleWriteException).
   */
  async putPolicy(
    orgId: string,
    scope: PolicyScope,
    scopeId: string,
    input: PutPolicyInput,
    audit: AuditedBy<AccessPolicy>,
    expectedVersion?: number,
  ): Promise<AccessPolicy> {
    const lists = [
      ['allow', input.allow, 'tool'],
      ['deny', input.deny, 'tool'],
      ['autoExecute', input.autoExecute ?? [], 'tool'],
      ['resourceAllow', input.resourceAllow ?? [], 'resource'],
      ['resourceDeny', input.resourceDeny ?? [], 'resource'],
      ['promptAllow', input.promptAllow ?? [], 'tool'],
      ['promptDeny', input.promptDeny ?? [], 'tool'],
    ] as const;
    for (const [name, list, kind] of lists) {
      const bad = findInvalidPattern(name, list, kind);
      if (bad) throw new PolicyAdminException(PolicyAdminExceptionCode.InvalidPattern, bad.message, bad.field);
    }
    for (const name of ['maxAnswerTokens', 'maxSessionSchemaTokens', 'outputTokenCap'] as const) {
      const v = input[name];
      if (v !== undefined && v !== null && (!Number.isSafeInteger(v) || v < 1)) {
        throw new PolicyAdminException(
          PolicyAdminExceptionCode.InvalidSetting,
          `${name} must be a positive integer`,
          name,
        );
      }
    }
    await this.assertScopeInOrg(orgId, scope, scopeId);

    const data = {
      allow: dedupe(input.allow),
      deny: dedupe(input.deny),
      autoExecute: dedupe(input.autoExecute ?? []),
      resourceAllow: dedupe(input.resourceAllow ?? []),
      resourceDeny: dedupe(input.resourceDeny ?? []),
      promptAllow: dedupe(input.promptAllow ?? []),
      promptDeny: dedupe(input.promptDeny ?? []),
      disclosureMode: input.disclosureMode ?? null,
      maxAnswerTokens: input.maxAnswerTokens ?? null,
      maxSessionSchemaTokens: input.maxSessionSchemaTokens ?? null,
      outputTokenCap: input.outputTokenCap ?? null,
      outputOverflow: input.outputOverflow ?? null,
    };
    const policy = await this.prisma.$transaction(async (tx) => {
      const put =
        expectedVersion === undefined
          ? await upsert(tx, orgId, scope, scopeId, data)
          : await updateAt(tx, orgId, scope, scopeId, data, expectedVersion);
      await recordAudited(tx, audit, put);
      return put;
    });
    await this.redis.publish(ORG_CONFIG_CHANGED_CHANNEL, orgId);
    return policy;
  }

  /** The policy of one scope, or null when that level has none. */
  async getPolicy(orgId: string, scope: PolicyScope, scopeId: string): Promise<AccessPolicy | null> {
    await this.assertScopeInOrg(orgId, scope, scopeId);
    return this.prisma.accessPolicy.findUnique({ where: { orgId_scope_scopeId: { orgId, scope, scopeId } } });
  }

  listPolicies(orgId: string): Promise<AccessPolicy[]> {
    return this.prisma.accessPolicy.findMany({ where: { orgId }, orderBy: [{ scope: 'asc' }, { createdAt: 'asc' }] });
  }

  private async assertScopeInOrg(orgId: string, scope: PolicyScope, scopeId: string): Promise<void> {
    if (!(await scopeBelongsToOrg(this.prisma, orgId, scope, scopeId))) {
      throw new PolicyAdminException(
        PolicyAdminExceptionCode.ScopeNotFound,
        `${scope.toLowerCase()} ${scopeId} not found in this organization`,
        'scopeId',
      );
    }
  }
}

function upsert(
  tx: Prisma.TransactionClient,
  orgId: string,
  scope: PolicyScope,
  scopeId: string,
  data: PolicyColumns,
): Promise<AccessPolicy> {
  return tx.accessPolicy.upsert({
    where: { orgId_scope_scopeId: { orgId, scope, scopeId } },
    create: { orgId, scope, scopeId, ...data },
    update: { ...data, version: { increment: 1 } },
  });
}

async function updateAt(
  tx: Prisma.TransactionClient,
  orgId: string,
  scope: PolicyScope,
  scopeId: string,
  data: PolicyColumns,
  expectedVersion: number,
): Promise<AccessPolicy> {
  const { count } = await tx.accessPolicy.updateMany({
    where: { orgId, scope, scopeId, version: expectedVersion },
    data: { ...data, version: { increment: 1 } },
  });
  const now = await tx.accessPolicy.findUnique({
    where: { orgId_scope_scopeId: { orgId, scope, scopeId } },
  });
  if (count === 0 || !now) throw new StaleWriteException('policy', expectedVersion, now?.version ?? null);
  return now;
}
