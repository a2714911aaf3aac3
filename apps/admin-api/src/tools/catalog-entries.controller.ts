import { Body, Controller, Get, HttpCode, HttpStatus, Post, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiConflictResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiPropertyOptional,
  ApiTags,
} from '@nestjs/swagger';
import { CatalogEntryReviewService } from '@tollgate/upstream-registry';
import type { CatalogEntry } from '@tollgate/db';
import { AdminPrincipal, auditBy } from '@tollgate/identity';
import { IsIn, IsOptional, IsUUID } from 'class-validator';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { OrgAccess, OrgAccessLevel } from '../auth/org-access';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { UuidParam } from '../common/request/uuid-param.decorator';
import { ApproveToolDto, RejectToolDto } from './review-tool.dto';

const KINDS = ['RESOURCE', 'RESOURCE_TEMPLATE', 'PROMPT'] as const;
const STATUSES = ['APPROVED', 'PENDING', 'REJECTED'] as const;

export class ListCatalogEntriesQuery {
  @ApiPropertyOptional({ format: 'uuid' }) @IsOptional() @IsUUID() upstreamId?: string;
  @ApiPropertyOptional({ enum: KINDS }) @IsOptional() @IsIn(KINDS) kind?: (typeof KINDS)[number];
  @ApiPropertyOptional({ enum: STATUSES }) @IsOptional() @IsIn(STATUSES) reviewStatus?: (typeof STATUSES)[number];
}

export class CatalogEntryView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) upstreamId!: string;
  @ApiProperty({ enum: KINDS }) kind!: string;
  @ApiProperty({ description: 'The URI, URI template or prompt name at the upstream' }) key!: string;
  @ApiProperty({ description: 'As the upstream lists it now' }) definition!: unknown;
  @ApiProperty() definitionHash!: string;
  @ApiProperty({ nullable: true, description: 'The approved definition the edge serves' }) pinnedDefinition!: unknown;
  @ApiProperty({ nullable: true, type: String }) pinnedHash!: string | null;
  @ApiProperty({ enum: STATUSES }) reviewStatus!: string;
}

function toView(e: CatalogEntry): CatalogEntryView {
  const { id, upstreamId, kind, key, definition, definitionHash, pinnedDefinition, pinnedHash, reviewStatus } = e;
  return { id, upstreamId, kind, key, definition, definitionHash, pinnedDefinition, pinnedHash, reviewStatus };
}

/** Review of the resources, templates and prompts the catalog holds (tools have /tools). */
@ApiTags('catalog')
@ApiBearerAuth()
@Controller('v1/orgs/:orgId/catalog-entries')
export class CatalogEntriesController {
  constructor(private readonly review: CatalogEntryReviewService) {}

  @Get()
  @OrgAccess(OrgAccessLevel.Read)
  @ApiOperation({
    summary:
      'List catalogued resources, resource templates and prompts, e.g. those waiting for review (reviewStatus=PENDING)',
  })
  @ApiOkResponse({ type: [CatalogEntryView] })
  async list(@UuidParam('orgId') orgId: string, @Query() query: ListCatalogEntriesQuery): Promise<CatalogEntryView[]> {
    return (await this.review.listEntries(orgId, query)).map(toView);
  }

  @Post(':entryId/approve')
  @HttpCode(HttpStatus.OK)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary:
      'Pin the latest definition (the edge serves it at once); 409 if it changed since the reviewer saw definitionHash',
  })
  @ApiOkResponse({ type: CatalogEntryView })
  @ApiConflictResponse({ type: ErrorBodyView })
  async approve(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('entryId') entryId: string,
    @Body() dto: ApproveToolDto,
  ): Promise<CatalogEntryView> {
    const entry = await this.review.approve(orgId, entryId, dto.definitionHash, {
      by: auditBy(admin),
      entry: (e) => ({
        orgId,
        action: 'catalog-entry.approved',
        targetType: 'catalog-entry',
        targetId: e.id,
        details: { kind: e.kind, key: e.key, definitionHash: e.definitionHash, reason: dto.reason },
      }),
    });
    return toView(entry);
  }

  @Post(':entryId/reject')
  @HttpCode(HttpStatus.OK)
  @OrgAccess(OrgAccessLevel.Manage)
  @ApiOperation({
    summary: 'Reject the latest definition: the edge keeps serving the pinned one, or keeps a new entry hidden',
  })
  @ApiOkResponse({ type: CatalogEntryView })
  @ApiConflictResponse({ type: ErrorBodyView })
  async reject(
    @CurrentAdmin() admin: AdminPrincipal,
    @UuidParam('orgId') orgId: string,
    @UuidParam('entryId') entryId: string,
    @Body() dto: RejectToolDto,
  ): Promise<CatalogEntryView> {
    const entry = await this.review.reject(orgId, entryId, dto.definitionHash, {
      by: auditBy(admin),
      entry: (e) => ({
        orgId,
        action: 'catalog-entry.rejected',
        targetType: 'catalog-entry',
        targetId: e.id,
        details: { kind: e.kind, key: e.key, definitionHash: e.definitionHash, reason: dto.reason },
      }),
    });
    return toView(entry);
  }
}
