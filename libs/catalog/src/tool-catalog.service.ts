import { Injectable, OnModuleInit } from '@nestjs/common';
import { PrismaService } from '@tollgate/db';
import { exposedToolName } from '@tollgate/kernel';
import { OrgConfigCache, RedisService } from '@tollgate/redis';
import { UpstreamSpec } from '@tollgate/upstream';
import { ToolDefinition } from './tool-definition';
import { UpstreamRegistry } from './upstream-registry.service';

/** A tool as the edge serves it: the pinned definition of an enabled upstream. */
export interface ServedTool {
  id: string;
  exposedName: string;
  namespace: string;
  name: string;
  upstreamId: string;
  definition: ToolDefinition;
  schemaTokens: number;
  outputTokenCap: number | null;
  tier: 'HOT' | 'WARM' | 'STANDARD' | 'COLD';
  tierScore: number;
  category: string | null;
}

export interface OrgCatalog {
  tools: ServedTool[];
  byExposedName: Map<string, ServedTool>;
  upstreams: Map<string, UpstreamSpec>;
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

  private async load(orgId: string): Promise<OrgCatalog> {
    const upstreams = await this.prisma.upstreamServer.findMany({ where: { orgId, enabled: true } });
    const rows = await this.prisma.tool.findMany({
      where: { orgId, removedAt: null, pinnedHash: { not: null }, upstreamId: { in: upstreams.map((u) => u.id) } },
      orderBy: [{ upstreamId: 'asc' }, { name: 'asc' }],
    });
    const byId = new Map(upstreams.map((u) => [u.id, u]));
    const tools: ServedTool[] = rows.map((t) => {
      const up = byId.get(t.upstreamId)!;
      return {
        id: t.id,
        exposedName: exposedToolName({ namespace: up.namespace, tool: t.name }),
        namespace: up.namespace,
        name: t.name,
        upstreamId: t.upstreamId,
        definition: t.pinnedDefinition as unknown as ToolDefinition,
        schemaTokens: t.schemaTokens,
        outputTokenCap: up.outputTokenCap,
        tier: t.tier,
        tierScore: t.tierScore,
        category: t.category,
      };
    });
    tools.sort((a, b) => (a.exposedName < b.exposedName ? -1 : a.exposedName > b.exposedName ? 1 : 0));
    return {
      tools,
      byExposedName: new Map(tools.map((t) => [t.exposedName, t])),
      upstreams: new Map(upstreams.map((u) => [u.id, this.registry.specOf(u)])),
    };
  }
}
