import { Injectable } from '@nestjs/common';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { OrgCatalog, ServedTool, ToolCatalogService } from '@tollgate/upstream-registry';
import {
  DisclosureCatalog,
  DisclosureException,
  DisclosureScope,
  DisclosureTool,
  META_TOOL_NAMES,
  agentToolList,
  codeModeAgentToolList,
  disclosureToolOf,
  listedToolEntry,
  requestedDisclosureMode,
  resolveAutoMode,
} from '@tollgate/disclosure';
import { Principal } from '@tollgate/identity';
import { PolicyService, StoredPolicy } from '@tollgate/policy';
import { McpSession, McpSessionStore } from '../session/mcp-session.store';
import { SessionHub } from '../session/session-hub.service';
import { disclosureErrorResult, optInt, optString } from './disclosure-call';
import { disclosureScopeFor } from './disclosure-scope';
import { PricingService } from '@tollgate/pricing';
import { countJsonTokens } from '@tollgate/tokens';
import { CodeModeService } from '../code-mode/code-mode.service';
import { GovernedCallPipeline, VisibleTool } from '../governed-call/governed-call.pipeline';
import { ToolErrorCode, toolErrorResult } from '../governed-call/tool-error';
import { discoveryResult } from '../trail/agent-trail';

export const DISCLOSURE_META_KEY = 'tollgate/disclosure';

export type DisclosureMode = 'FULL' | 'PROGRESSIVE' | 'CODE';

export interface ListedTools {
  tools: Tool[];
  mode: DisclosureMode;
  tokens: number;
  /** The disclosure catalog version the list was rendered from; null for code mode's fixed list. */
  catalogVersion: string | null;
}

interface DisclosureView {
  mode: DisclosureMode;
  catalog: DisclosureCatalog;
  scope: DisclosureScope;
  orgCatalog: OrgCatalog;
  levels: StoredPolicy[];
}

/**
 * What an agent's `tools/list` holds and how the discovery tools answer: the full catalog it may
 * use, or (progressive) the hot tools plus search, schemas and categories within token budgets.
 * Mode: the key's, else the most specific policy's, else AUTO. Code mode's fixed list is
 * CodeModeService's. Which tool call comes here is ToolRouter's choice.
 */
@Injectable()
export class ToolDisclosure {
  private readonly built = new WeakMap<OrgCatalog, Promise<DisclosureCatalog>>();

  constructor(
    private readonly catalogs: ToolCatalogService,
    private readonly policies: PolicyService,
    private readonly pricing: PricingService,
    private readonly pipeline: GovernedCallPipeline,
    private readonly codeMode: CodeModeService,
    private readonly sessions: McpSessionStore,
    private readonly hub: SessionHub,
  ) {}

  /** The agent's `tools/list`, with the catalog version it was rendered from. */
  async listTools(principal: Principal, session: McpSession | null = null): Promise<ListedTools> {
    if (await this.codeMode.appliesTo(principal)) {
      const list = codeModeAgentToolList();
      // The same six tools whatever the catalog: rendered from no catalog version.
      return { tools: list.tools as Tool[], mode: 'CODE', tokens: list.tokens, catalogVersion: null };
    }
    const view = await this.view(principal);
    const fullEntries = view.mode === 'FULL' ? (await this.pipeline.visibleTools(principal)).map(listedTool) : [];
    const initial = agentToolList(view.mode === 'FULL' ? 'FULL' : 'PROGRESSIVE', {
      catalog: view.catalog,
      scope: view.scope,
      fullEntries: () => fullEntries,
    });
    const catalogVersion = view.catalog.version;
    if (view.mode === 'FULL' || !session?.loadedTools.length)
      return { tools: initial.tools as Tool[], mode: view.mode, tokens: initial.tokens, catalogVersion };
    // Tools the session loaded (fetched their schemas) join its list, while they stay allowed.
    const listed = new Set(initial.tools.map((t) => t.name as string));
    const now = new Date();
    const loaded = await Promise.all(
      (session?.loadedTools ?? [])
        .filter((n) => !listed.has(n) && view.scope.isVisible?.(n) !== false)
        .map((n) => view.orgCatalog.byExposedName.get(n))
        .filter((t): t is ServedTool => t !== undefined)
        // Listed like a full-mode entry, price included.
        .map(async (t) =>
          listedTool({ tool: t, price: await this.pricing.priceFor(principal.orgId, t.upstreamId, t.name, now) }),
        ),
    );
    const tools = [...(initial.tools as Tool[]), ...loaded];
    return { tools, mode: 'PROGRESSIVE', tokens: countJsonTokens({ tools }), catalogVersion };
  }

  /** Answers a discovery tool: `tollgate__search_tools`, `tollgate__get_tool_schemas` or `tollgate__list_categories`. */
  async answerDiscoveryTool(
    principal: Principal,
    name: string,
    args: Record<string, unknown> | undefined,
    session: McpSession | null,
  ): Promise<CallToolResult> {
    const a = args ?? {};
    const view = await this.view(principal);
    try {
      const answer =
        name === META_TOOL_NAMES.searchTools
          ? view.catalog.searchTools(
              {
                query: String(a.query ?? ''),
                category: optString(a.category),
                server: optString(a.server),
                limit: optInt(a.limit),
                maxTokens: optInt(a.maxTokens),
                cursor: optString(a.cursor),
              },
              view.scope,
            )
          : name === META_TOOL_NAMES.getToolSchemas
            ? view.catalog.getToolSchemas(
                {
                  names: Array.isArray(a.names) ? a.names.map(String) : [],
                  maxTokens: optInt(a.maxTokens),
                  cursor: optString(a.cursor),
                },
                view.scope,
              )
            : view.catalog.listCategories({ maxTokens: optInt(a.maxTokens), cursor: optString(a.cursor) }, view.scope);
      if (name === META_TOOL_NAMES.getToolSchemas && session) {
        const refused = await this.loadIntoSession(
          session,
          view,
          (answer.answer as { tools: { name: string }[] }).tools.map((t) => t.name),
        );
        if (refused) return refused;
      }
      return discoveryResult(answer, view.catalog.version);
    } catch (err) {
      if (err instanceof DisclosureException) return disclosureErrorResult(err, name);
      throw err;
    }
  }

  /**
   * Adds fetched tools to the session's list and tells the agent its list changed; refused when
   * the policy's schema budget per session would be exceeded.
   */
  private async loadIntoSession(
    session: McpSession,
    view: DisclosureView,
    names: string[],
  ): Promise<CallToolResult | null> {
    const tools = names.map((n) => ({
      name: n,
      schemaTokens: view.orgCatalog.byExposedName.get(n)?.schemaTokens ?? 0,
    }));
    const fresh = tools.filter((t) => !session.loadedTools.includes(t.name));
    const ceilings = view.levels.map((l) => l.maxSessionSchemaTokens).filter((n): n is number => n !== null);
    const ceiling = ceilings.length ? Math.min(...ceilings) : null;
    const requested = fresh.reduce((sum, t) => sum + t.schemaTokens, 0);
    if (ceiling !== null && session.schemaTokens + requested > ceiling) {
      return toolErrorResult({
        code: ToolErrorCode.SessionSchemaBudgetExceeded,
        message: `Loading these schemas (${requested} tokens) would take this session past its schema budget of ${ceiling} tokens.`,
        hint: 'Fetch fewer schemas, or call tools you already know by name; a new session starts with a fresh budget.',
        tool: META_TOOL_NAMES.getToolSchemas,
        loadedTokens: session.schemaTokens,
        requestedTokens: requested,
        sessionSchemaTokenCeiling: ceiling,
      });
    }
    if ((await this.sessions.loadTools(session, fresh)).length > 0) await this.hub.notifyToolListChanged(session.id);
    return null;
  }

  private async view(principal: Principal): Promise<DisclosureView> {
    const [orgCatalog, levels] = await Promise.all([
      this.catalogs.catalogFor(principal.orgId),
      this.policies.levelsFor(principal),
    ]);
    const catalog = await this.disclosureCatalog(principal.orgId, orgCatalog);
    const scope = disclosureScopeFor(orgCatalog, levels);
    const requested = requestedDisclosureMode(principal.disclosureMode, levels);
    const resolved = resolveAutoMode(requested, requested === 'AUTO' ? catalog.plainToolList(scope).tokens : 0);
    // CODE keys are served by CodeModeService before this; here only FULL or PROGRESSIVE remain.
    const mode: DisclosureMode = resolved === 'FULL' ? 'FULL' : 'PROGRESSIVE';
    return { mode, catalog, scope, orgCatalog, levels };
  }

  /** Built once per catalog version (the org catalog object is replaced whenever anything changes). */
  private disclosureCatalog(orgId: string, orgCatalog: OrgCatalog): Promise<DisclosureCatalog> {
    let built = this.built.get(orgCatalog);
    if (!built) {
      built = (async () => {
        const now = new Date();
        const tools: DisclosureTool[] = [];
        for (const t of orgCatalog.tools) {
          const price = await this.pricing.priceFor(orgId, t.upstreamId, t.name, now);
          tools.push(disclosureToolOf(t, price?.perCallMicros));
        }
        return new DisclosureCatalog(tools);
      })();
      this.built.set(orgCatalog, built);
    }
    return built;
  }
}

function listedTool({ tool, price }: VisibleTool): Tool {
  // The pinned definition, and whether it may run as a task as the upstream lists it now.
  const execution = tool.taskSupport ? { execution: { taskSupport: tool.taskSupport } } : {};
  return listedToolEntry({ ...tool.definition, ...execution }, tool.exposedName, price) as Tool;
}
