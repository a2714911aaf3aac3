import { AuditedBy, recordAudited } from '@tollgate/audit';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { Prisma, PrismaService, Tool } from '@tollgate/db';
import { ORG_CONFIG_CHANGED_CHANNEL, RedisService } from '@tollgate/redis';
import { CatalogException, CatalogExceptionCode } from './catalog.exception';
import { ToolDefinition, schemaTokenCount } from './tool-definition';
import { ToolDefinitionDiff, diffToolDefinitions } from './tool-diff';
import { TOOL_PROFILER, ToolProfiler, profileColumns, profiledHash } from './tool-profiler';

export type ToolReviewStatus = Tool['reviewStatus'];

/** A catalog row with its upstream's namespace (for the exposed name). */
export type ReviewedTool = Tool & { upstream: { namespace: string } };

export interface ToolListFilter {
  reviewStatus?: ToolReviewStatus;
  upstreamId?: string;
  /** Tools the upstream no longer lists; left out unless asked for. */
  includeRemoved?: boolean;
}

export interface ToolDiffResult {
  tool: ReviewedTool;
  diff: ToolDefinitionDiff;
  /** Tokens the latest definition would cost as a plain tools/list entry once approved. */
  latestSchemaTokens: number;
}

export interface ReviewDecision {
  tool: ReviewedTool;
  /** The pinned hash before the decision (null: never approved). */
  previousPinnedHash: string | null;
}

const WITH_NAMESPACE = { upstream: { select: { namespace: true } } } as const;

/**
 * The pinning review: which tools wait for a decision, what changed, and the decision itself.
 * Approving pins the definition the reviewer saw (checked by hash, so a change that arrived in
 * between is not approved unseen); rejecting keeps serving the pinned version, or keeps a
 * never-approved tool hidden. Edges are told through `org-config-changed`.
 */
@Injectable()
export class ToolReviewService {
  private readonly logger = new Logger(ToolReviewService.name);

  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
    @Inject(TOLLGATE_CONFIG) private readonly config: BaseConfig,
    @Optional() @Inject(TOOL_PROFILER) private readonly profiler?: ToolProfiler,
  ) {}

  listTools(orgId: string, filter: ToolListFilter = {}): Promise<ReviewedTool[]> {
    return this.prisma.tool.findMany({
      where: {
        orgId,
        ...(filter.reviewStatus ? { reviewStatus: filter.reviewStatus } : {}),
        ...(filter.upstreamId ? { upstreamId: filter.upstreamId } : {}),
        ...(filter.includeRemoved ? {} : { removedAt: null }),
      },
      include: WITH_NAMESPACE,
      orderBy: [{ upstreamId: 'asc' }, { name: 'asc' }],
    });
  }

  async getTool(orgId: string, toolId: string): Promise<ReviewedTool> {
    const tool = await this.prisma.tool.findFirst({ where: { orgId, id: toolId }, include: WITH_NAMESPACE });
    if (!tool) throw new CatalogException(CatalogExceptionCode.ToolNotFound, `tool ${toolId} not found`);
    return tool;
  }

  /** The pinned definition against the one the upstream lists now. */
  async diff(orgId: string, toolId: string): Promise<ToolDiffResult> {
    const tool = await this.getTool(orgId, toolId);
    const latest = tool.definition as unknown as ToolDefinition;
    return {
      tool,
      diff: diffToolDefinitions(tool.pinnedDefinition as unknown as ToolDefinition | null, latest, tool),
      latestSchemaTokens: schemaTokenCount(latest, this.config.tokens.encoding),
    };
  }

  /** Pins the latest definition, if it is still the one with `definitionHash`. */
  async approve(
    orgId: string,
    toolId: string,
    definitionHash: string,
    audit: AuditedBy<ReviewDecision>,
  ): Promise<ReviewDecision> {
    const decision = await this.decide(orgId, toolId, definitionHash, audit, (tool) => {
      const reprofile = profiledHash(tool) !== tool.definitionHash || tool.summaryTokens === 0;
      return {
        pinnedDefinition: tool.definition as Prisma.InputJsonValue,
        pinnedHash: tool.definitionHash,
        reviewStatus: 'APPROVED',
        ...(reprofile
          ? profileColumns(
              tool.definition as unknown as ToolDefinition,
              tool.upstream.namespace,
              this.config.tokens.encoding,
              this.profiler,
            )
          : {}),
      };
    });
    this.logger.log(`tool ${toolId} of org ${orgId} approved at ${definitionHash}`);
    return decision;
  }

  /** Keeps the pinned version (or keeps a never-approved tool hidden); `definitionHash` optional. */
  async reject(
    orgId: string,
    toolId: string,
    definitionHash: string | undefined,
    audit: AuditedBy<ReviewDecision>,
  ): Promise<ReviewDecision> {
    const decision = await this.decide(orgId, toolId, definitionHash, audit, () => ({ reviewStatus: 'REJECTED' }));
    this.logger.log(`tool ${toolId} of org ${orgId} rejected at ${decision.tool.definitionHash}`);
    return decision;
  }

  private async decide(
    orgId: string,
    toolId: string,
    expectedHash: string | undefined,
    audit: AuditedBy<ReviewDecision>,
    change: (tool: ReviewedTool) => Prisma.ToolUpdateManyMutationInput,
  ): Promise<ReviewDecision> {
    const decision = await this.prisma.$transaction(async (tx) => {
      const found = await tx.tool.findFirst({ where: { orgId, id: toolId }, select: { upstreamId: true } });
      if (!found) throw new CatalogException(CatalogExceptionCode.ToolNotFound, `tool ${toolId} not found`);
      // The same lock as the upstream's sync: a sync cannot change the definition mid-decision.
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${found.upstreamId}))::text`;
      const tool = await tx.tool.findFirstOrThrow({ where: { orgId, id: toolId }, include: WITH_NAMESPACE });
      if (expectedHash !== undefined && tool.definitionHash !== expectedHash) {
        throw new CatalogException(
          CatalogExceptionCode.DefinitionChanged,
          `the tool's definition changed since it was reviewed: it is now ${tool.definitionHash}, not ${expectedHash}; look at the diff again`,
          'definitionHash',
        );
      }
      await tx.tool.updateMany({
        where: { orgId, id: toolId, definitionHash: tool.definitionHash },
        data: change(tool),
      });
      const updated = await tx.tool.findFirstOrThrow({ where: { orgId, id: toolId }, include: WITH_NAMESPACE });
      const decided = { tool: updated, previousPinnedHash: tool.pinnedHash };
      await recordAudited(tx, audit, decided);
      return decided;
    });
    await this.redis.publish(ORG_CONFIG_CHANGED_CHANNEL, orgId);
    return decision;
  }
}
