import { AuditedBy, recordAudited } from '@tollgate/audit';
import { Injectable } from '@nestjs/common';
import { CatalogEntry, Prisma, PrismaService } from '@tollgate/db';
import { ORG_CONFIG_CHANGED_CHANNEL, RedisService } from '@tollgate/redis';
import { CatalogException, CatalogExceptionCode } from './catalog.exception';

export interface CatalogEntryFilter {
  upstreamId?: string;
  kind?: CatalogEntry['kind'];
  reviewStatus?: CatalogEntry['reviewStatus'];
}

/**
 * The review of resources, templates and prompts, like tools': approving pins the definition the
 * reviewer saw (checked by hash), rejecting keeps the pinned version (or a new entry hidden).
 */
@Injectable()
export class CatalogEntryReviewService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
  ) {}

  listEntries(orgId: string, filter: CatalogEntryFilter = {}): Promise<CatalogEntry[]> {
    return this.prisma.catalogEntry.findMany({
      where: { orgId, removedAt: null, ...filter },
      orderBy: [{ upstreamId: 'asc' }, { kind: 'asc' }, { key: 'asc' }],
    });
  }

  approve(
    orgId: string,
    entryId: string,
    definitionHash: string,
    audit: AuditedBy<CatalogEntry>,
  ): Promise<CatalogEntry> {
    return this.decide(orgId, entryId, definitionHash, audit, (e) => ({
      pinnedDefinition: e.definition as Prisma.InputJsonValue,
      pinnedHash: e.definitionHash,
      reviewStatus: 'APPROVED',
    }));
  }

  reject(
    orgId: string,
    entryId: string,
    definitionHash: string | undefined,
    audit: AuditedBy<CatalogEntry>,
  ): Promise<CatalogEntry> {
    return this.decide(orgId, entryId, definitionHash, audit, () => ({ reviewStatus: 'REJECTED' }));
  }

  private async decide(
    orgId: string,
    entryId: string,
    definitionHash: string | undefined,
    audit: AuditedBy<CatalogEntry>,
    data: (e: CatalogEntry) => Prisma.CatalogEntryUpdateInput,
  ): Promise<CatalogEntry> {
    const entry = await this.prisma.catalogEntry.findFirst({ where: { orgId, id: entryId } });
    if (!entry)
      throw new CatalogException(CatalogExceptionCode.ToolNotFound, `catalog entry ${entryId} not found`, 'entryId');
    // Conditional on the hash the reviewer saw: a definition that changed meanwhile is not decided unseen.
    const expected = definitionHash ?? entry.definitionHash;
    const decided = await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.catalogEntry.updateMany({
        where: { id: entry.id, definitionHash: expected },
        data: data(entry) as Prisma.CatalogEntryUpdateManyMutationInput,
      });
      if (count === 0)
        throw new CatalogException(
          CatalogExceptionCode.DefinitionChanged,
          `the ${entry.kind.toLowerCase()} ${entry.key} changed since ${expected}; look at it again`,
          'definitionHash',
        );
      const after = await tx.catalogEntry.findUniqueOrThrow({ where: { id: entry.id } });
      await recordAudited(tx, audit, after);
      return after;
    });
    await this.redis.publish(ORG_CONFIG_CHANGED_CHANNEL, orgId);
    return decided;
  }
}
