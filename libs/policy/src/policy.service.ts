import { Injectable, OnModuleInit } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { OrgConfigCache, RedisService } from '@tollgate/redis';
import { ItemPolicyLevel, byBroadestScope } from './access-decision';
import { appliesToCaller } from '@tollgate/kernel';

export interface ScopeIds {
  orgId: string;
  teamId: string;
  userId: string;
  keyId: string;
}

export interface StoredPolicy extends ItemPolicyLevel {
  scopeId: string;
  autoExecute: readonly string[];
  disclosureMode: 'FULL' | 'PROGRESSIVE' | 'CODE' | 'AUTO' | null;
  maxAnswerTokens: number | null;
  maxSessionSchemaTokens: number | null;
  outputTokenCap: number | null;
  outputOverflow: 'PAGE' | 'REFUSE' | null;
}

function levelsApplying(all: StoredPolicy[], ids: ScopeIds): StoredPolicy[] {
  return all.filter((p) => appliesToCaller(p, ids));
}

/** Loads and caches an organisation's access policies; picks the levels that apply to a caller. */
@Injectable()
export class PolicyService implements OnModuleInit {
  private readonly cache: OrgConfigCache<StoredPolicy[]>;

  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
  ) {
    this.cache = new OrgConfigCache((orgId) => this.loadOrgPolicies(orgId));
  }

  async onModuleInit(): Promise<void> {
    await this.cache.attach(this.redis);
  }

  /** The org, team, user and key levels that apply to a caller (levels without a policy omitted). */
  async levelsFor(ids: ScopeIds): Promise<StoredPolicy[]> {
    return levelsApplying(await this.cache.get(ids.orgId), ids);
  }

  /**
   * levelsFor without a promise, when the organisation's policies are cached and fresh; undefined
   * when levelsFor has to load them. For a call's hot path.
   */
  cachedLevelsFor(ids: ScopeIds): StoredPolicy[] | undefined {
    const all = this.cache.peek(ids.orgId);
    return all && levelsApplying(all, ids);
  }

  private async loadOrgPolicies(orgId: string): Promise<StoredPolicy[]> {
    const rows = await this.prisma.accessPolicy.findMany({ where: { orgId } });
    // Kept broadest first, so a caller's levels (a filter of these) are decided on without a sort per call.
    return rows
      .map((r): StoredPolicy => ({
        scope: r.scope,
        scopeId: r.scopeId,
        allow: r.allow,
        deny: r.deny,
        resourceAllow: r.resourceAllow,
        resourceDeny: r.resourceDeny,
        promptAllow: r.promptAllow,
        promptDeny: r.promptDeny,
        autoExecute: r.autoExecute,
        disclosureMode: r.disclosureMode,
        maxAnswerTokens: r.maxAnswerTokens,
        maxSessionSchemaTokens: r.maxSessionSchemaTokens,
        outputTokenCap: r.outputTokenCap,
        outputOverflow: r.outputOverflow,
      }))
      .sort(byBroadestScope);
  }
}
