import { Injectable } from '@nestjs/common';
import { ToolCatalogService } from '@tollgate/upstream-registry';
import {
  DisclosureCatalog,
  DisclosureScope,
  agentToolList,
  answerTokenCeiling,
  codeModeAgentToolList,
  disclosureToolOf,
  listedToolEntry,
  requestedDisclosureMode,
  resolveAutoMode,
} from '@tollgate/disclosure';
import { IdentityService } from '@tollgate/identity';
import { PolicyService, decideAccess } from '@tollgate/policy';
import { PricingService } from '@tollgate/pricing';

export interface KeyPreview {
  keyId: string;
  /** The mode the key asked for (its own, else the most specific policy's, else AUTO). */
  requestedMode: 'FULL' | 'PROGRESSIVE' | 'CODE' | 'AUTO';
  /** The mode it gets: AUTO resolved by the size of the plain list. */
  mode: 'FULL' | 'PROGRESSIVE' | 'CODE';
  /** The initial `tools/list` the agent would read. */
  tools: Record<string, unknown>[];
  /** Tokens of `{"tools":[...]}` as the edge counts it. */
  tokens: number;
  /** Progressive: the hot tools (T0), best first. */
  hot: string[];
  /** Tools the key may use, and what listing all of them in full would cost. */
  visibleTools: number;
  plainListTokens: number;
  /** Policy ceiling on any one disclosure answer, if set. */
  maxAnswerTokens: number | null;
}

/**
 * What a key's agent would see on connecting, computed as the edge computes it (the same catalog,
 * policy levels, prices and the disclosure lib's mode rules, hot list and budgets), without a call.
 */
@Injectable()
export class KeyPreviewService {
  constructor(
    private readonly identity: IdentityService,
    private readonly catalogs: ToolCatalogService,
    private readonly policies: PolicyService,
    private readonly pricing: PricingService,
  ) {}

  async previewKey(orgId: string, keyId: string): Promise<KeyPreview> {
    const key = await this.identity.getVirtualKey(orgId, keyId);
    const ids = { orgId, teamId: key.teamId, userId: key.userId, keyId: key.id };
    const [orgCatalog, levels] = await Promise.all([this.catalogs.catalogFor(orgId), this.policies.levelsFor(ids)]);
    const now = new Date();
    const visible = orgCatalog.tools.filter(
      (t) => decideAccess(levels, { namespace: t.namespace, tool: t.name }).allowed,
    );
    const prices = new Map(
      await Promise.all(
        orgCatalog.tools.map(
          async (t) => [t.exposedName, await this.pricing.priceFor(orgId, t.upstreamId, t.name, now)] as const,
        ),
      ),
    );
    const catalog = new DisclosureCatalog(
      orgCatalog.tools.map((t) => disclosureToolOf(t, prices.get(t.exposedName)?.perCallMicros)),
    );
    const allowed = new Set(visible.map((t) => t.exposedName));
    const ceiling = answerTokenCeiling(levels);
    const scope: DisclosureScope = {
      isVisible: (n) => allowed.has(n),
      ...(ceiling !== undefined ? { maxTokensCeiling: ceiling } : {}),
    };
    const requested = requestedDisclosureMode(key.disclosureMode, levels);
    const plainListTokens = catalog.plainToolList(scope).tokens;
    const mode = resolveAutoMode(requested, plainListTokens);
    const base = {
      keyId: key.id,
      requestedMode: requested,
      mode,
      visibleTools: visible.length,
      plainListTokens,
      maxAnswerTokens: ceiling ?? null,
    };
    // The same composition the edge sends, so the preview cannot drift from it.
    const list =
      mode === 'CODE'
        ? codeModeAgentToolList()
        : agentToolList(mode, {
            catalog,
            scope,
            fullEntries: () =>
              visible.map((t) => listedToolEntry(t.definition, t.exposedName, prices.get(t.exposedName) ?? null)),
          });
    return { ...base, ...list };
  }
}
