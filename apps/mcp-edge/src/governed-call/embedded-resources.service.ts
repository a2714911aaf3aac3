import { Injectable } from '@nestjs/common';
import { Principal } from '@tollgate/identity';
import {
  ItemPolicyLevel,
  PolicyService,
  ResourceDecision,
  decideResourceAccess,
  describeResourceDecision,
} from '@tollgate/policy';
import { EdgeMetrics } from '../health/edge-metrics.service';

/** Where a withheld resource's marker carries the refusal (code, uri, reason, rule, scope). */
export const WITHHELD_META_KEY = 'tollgate/withheld';

type ContentBlock = { type: string; [field: string]: unknown };

/**
 * Resources embedded (`type: "resource"`) or linked (`resource_link`) in a tool result or a prompt
 * message are the upstream's resources like any it serves: the caller's resource policy decides
 * them (on the normalised URI), and one it refuses is replaced by a text marker that says which
 * resource was withheld and why, so the agent knows something is missing.
 */
@Injectable()
export class EmbeddedResources {
  constructor(
    private readonly policies: PolicyService,
    private readonly metrics: EdgeMetrics,
  ) {}

  /**
   * `blocks` with every resource the policy refuses replaced by its marker (the same array when none
   * is). `levels`: the caller's policy levels when the caller has them already (a tool call decided
   * on them); else they are read, and only when a block is a resource.
   */
  async withholdDenied<T extends ContentBlock>(
    principal: Principal,
    namespace: string,
    blocks: T[],
    levels?: readonly ItemPolicyLevel[],
  ): Promise<T[]> {
    // The common answer carries no resource: no policy read.
    if (!carriesResources(blocks)) return blocks;
    levels ??= await this.policies.levelsFor(principal);
    let changed = false;
    const out = blocks.map((block) => {
      const uri = uriOf(block);
      if (uri === undefined) return block;
      const decision = decideResourceAccess(levels, namespace, uri);
      if (decision.allowed) return block;
      changed = true;
      this.metrics.recordRefusal(uri, 'RESOURCE_NOT_ALLOWED', principal.orgId);
      return withheldMarker(uri, decision) as unknown as T;
    });
    return changed ? out : blocks;
  }
}

/** Whether any block is a resource, embedded or linked (withholdDenied decides those). */
export function carriesResources(blocks: readonly ContentBlock[]): boolean {
  return blocks.some((b) => uriOf(b) !== undefined);
}

function uriOf(block: ContentBlock): string | undefined {
  const uri =
    block.type === 'resource'
      ? (block.resource as { uri?: unknown } | undefined)?.uri
      : block.type === 'resource_link'
        ? block.uri
        : undefined;
  return typeof uri === 'string' ? uri : undefined;
}

function withheldMarker(uri: string, decision: Exclude<ResourceDecision, { allowed: true }>): ContentBlock {
  return {
    type: 'text',
    text: `[Resource ${uri} withheld by Tollgate: ${describeResourceDecision(decision)}.]`,
    _meta: {
      [WITHHELD_META_KEY]: {
        code: 'RESOURCE_NOT_ALLOWED',
        uri,
        reason: decision.reason,
        ...('scope' in decision ? { scope: decision.scope } : {}),
        ...('rule' in decision ? { rule: decision.rule } : {}),
      },
    },
  };
}
