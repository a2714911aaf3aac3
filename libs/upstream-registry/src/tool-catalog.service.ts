import { Injectable, OnModuleInit } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { OrgConfigCache, RedisService } from '@tollgate/redis';
import { UpstreamSpec } from '@tollgate/mcp-client';
import { exposedNames, exposedUris } from './catalog-exposure';
import { TaskSupport, ToolDefinition } from './tool-definition';
import { UpstreamRegistry } from './upstream-registry.service';

/** A tool as the edge serves it: the pinned definition of an enabled upstream. */
export interface ServedTool {
  id: string;
  exposedName: string;
  namespace: string;
  name: string;
  upstreamId: string;
  definition: ToolDefinition;
  /** Hash of `definition`, the pinned (approved) one: caches keyed by it follow approvals. */
  pinnedHash: string;
  /** `execution.taskSupport` as the upstream last listed it (not pinned; null: not declared). */
  taskSupport: TaskSupport | null;
  schemaTokens: number;
  outputTokenCap: number | null;
  /** Observed 99th percentile of its calls' output tokens (the worker keeps it); null: no history. */
  outputTokensP99: number | null;
  tier: 'HOT' | 'WARM' | 'STANDARD' | 'COLD';
  tierScore: number;
  category: string | null;
}

/** A listed resource, resource template or prompt as the edge serves it: its pinned definition. */
export interface ServedEntry {
  /** The URI (resources), URI template (templates) or name (prompts) agents see. */
  exposed: string;
  /** The same as the upstream knows it. */
  key: string;
  namespace: string;
  upstreamId: string;
  definition: Record<string, unknown>;
}

export interface OrgCatalog {
  tools: ServedTool[];
  byExposedName: Map<string, ServedTool>;
  upstreams: Map<string, UpstreamSpec>;
  upstreamsByNamespace: Map<string, UpstreamSpec>;
  /** Each enabled upstream's own output token cap (null: none), for reads and gets as for tool results. */
  outputTokenCaps: Map<string, number | null>;
  resources: ServedEntry[];
  resourceTemplates: ServedEntry[];
  prompts: ServedEntry[];
  resourcesByUri: Map<string, ServedEntry>;
  promptsByExposedName: Map<string, ServedEntry>;
  /** Names an unprefixed upstream could not take because another item is exposed under them. */
  collisions: string[];
  /** Namespaces of the org's disabled upstreams, so a call to one of their tools is refused as such. */
  disabledNamespaces: Set<string>;
}

/** The organisation's servable catalog, cached per org and dropped on any catalog or config change. */
@Injectable()
export class ToolCatalogService implements OnModuleInit {
  private readonly cache: OrgConfigCache<OrgCatalog>;

  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
    private readonly registry: UpstreamRegistry,
  ) {
    this.cache = new OrgConfigCache((orgId) => this.load(orgId));
  }

  async onModuleInit(): Promise<void> {
    await this.cache.attach(this.redis);
  }

  catalogFor(orgId: string): Promise<OrgCatalog> {
    return this.cache.get(orgId);
  }

  /**
   * The organisation's catalog without a promise, when it is cached and fresh (what catalogFor
   * would resolve with); undefined when catalogFor has to load it. For a call's hot path.
   */
  cachedCatalog(orgId: string): OrgCatalog | undefined {
    return this.cache.peek(orgId);
  }

  private async load(orgId: string): Promise<OrgCatalog> {
    const upstreams = await this.prisma.upstreamServer.findMany({ where: { orgId, enabled: true } });
    const disabled = await this.prisma.upstreamServer.findMany({
      where: { orgId, enabled: false, deletedAt: null },
      select: { namespace: true },
    });
    const rows = await this.prisma.tool.findMany({
      where: { orgId, removedAt: null, pinnedHash: { not: null }, upstreamId: { in: upstreams.map((u) => u.id) } },
      orderBy: [{ upstreamId: 'asc' }, { name: 'asc' }],
    });
    const entryRows = await this.prisma.catalogEntry.findMany({
      where: { orgId, removedAt: null, pinnedHash: { not: null }, upstreamId: { in: upstreams.map((u) => u.id) } },
      orderBy: [{ upstreamId: 'asc' }, { key: 'asc' }],
    });
    const byId = new Map(upstreams.map((u) => [u.id, u]));
    // Tools and prompts are separate name spaces in MCP: each is checked for collisions on its own.
    const toolNames = exposedNames(
      rows.map((t) => ({
        namespace: byId.get(t.upstreamId)!.namespace,
        name: t.name,
        unprefixed: byId.get(t.upstreamId)!.exposeUnprefixed,
      })),
    );
    const promptRows = entryRows.filter((e) => e.kind === 'PROMPT');
    const promptNames = exposedNames(
      promptRows.map((e) => ({
        namespace: byId.get(e.upstreamId)!.namespace,
        name: e.key,
        unprefixed: byId.get(e.upstreamId)!.exposeUnprefixed,
      })),
    );
    const toolNameList = [...toolNames.names.values()];
    const tools: ServedTool[] = rows.map((t, i) => {
      const up = byId.get(t.upstreamId)!;
      return {
        id: t.id,
        exposedName: toolNameList[i],
        namespace: up.namespace,
        name: t.name,
        upstreamId: t.upstreamId,
        definition: t.pinnedDefinition as unknown as ToolDefinition,
        pinnedHash: t.pinnedHash!,
        taskSupport: t.taskSupport as TaskSupport | null,
        schemaTokens: t.schemaTokens,
        outputTokenCap: up.outputTokenCap,
        tier: t.tier,
        tierScore: t.tierScore,
        outputTokensP99: t.outputTokensP99,
        category: t.category,
      };
    });
    tools.sort((a, b) => (a.exposedName < b.exposedName ? -1 : a.exposedName > b.exposedName ? 1 : 0));
    const promptNameList = [...promptNames.names.values()];
    const served = (e: (typeof entryRows)[number], exposed: string): ServedEntry => ({
      exposed,
      key: e.key,
      namespace: byId.get(e.upstreamId)!.namespace,
      upstreamId: e.upstreamId,
      definition: e.pinnedDefinition as Record<string, unknown>,
    });
    const prompts = promptRows.map((e, i) => served(e, promptNameList[i])).sort(byExposed);
    const uriEntries = (kind: 'RESOURCE' | 'RESOURCE_TEMPLATE') => {
      const list = entryRows
        .filter((e) => e.kind === kind)
        .map((e) => ({ row: e, namespace: byId.get(e.upstreamId)!.namespace, uri: e.key }));
      const uris = exposedUris(list);
      return list.map((l) => served(l.row, uris.get(l)!)).sort(byExposed);
    };
    const resources = uriEntries('RESOURCE');
    const specs = new Map(upstreams.map((u) => [u.id, this.registry.specOf(u)]));
    return {
      tools,
      byExposedName: new Map(tools.map((t) => [t.exposedName, t])),
      upstreams: specs,
      upstreamsByNamespace: new Map(upstreams.map((u) => [u.namespace, specs.get(u.id)!])),
      outputTokenCaps: new Map(upstreams.map((u) => [u.id, u.outputTokenCap])),
      resources,
      resourceTemplates: uriEntries('RESOURCE_TEMPLATE'),
      prompts,
      resourcesByUri: new Map(resources.map((r) => [r.exposed, r])),
      promptsByExposedName: new Map(prompts.map((p) => [p.exposed, p])),
      collisions: [...new Set([...toolNames.collisions, ...promptNames.collisions])].sort(),
      disabledNamespaces: new Set(disabled.map((u) => u.namespace)),
    };
  }
}

function byExposed(a: ServedEntry, b: ServedEntry): number {
  return a.exposed < b.exposed ? -1 : a.exposed > b.exposed ? 1 : 0;
}
