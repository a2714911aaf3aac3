import { Controller, ForbiddenException, Get, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiForbiddenResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { AdminPrincipal } from '@tollgate/identity';
import {
  PLATFORM_REPORT_DIMENSIONS,
  PlatformReportDimension,
  PlatformSpendReportService,
  ReportingException,
  ReportingExceptionCode,
} from '@tollgate/reporting';
import { CurrentAdmin } from '../auth/current-admin.decorator';
import { ErrorBodyView } from '../common/errors/error-body.view';
import { PlatformSpendReportQuery } from './spend-report.query';
import { PlatformSpendReportView, toPlatformSpendReportView } from './spend-report.view';

@ApiTags('reports')
@ApiBearerAuth()
@Controller('v1/reports')
export class PlatformReportsController {
  constructor(private readonly spend: PlatformSpendReportService) {}

  @Get('spend')
  @ApiOperation({
    summary:
      'Spend across organizations from the ledger, by organization and/or day (platform admins); each organization’s days follow its time zone',
  })
  @ApiOkResponse({ type: PlatformSpendReportView })
  @ApiBadRequestResponse({ type: ErrorBodyView })
  @ApiForbiddenResponse({ type: ErrorBodyView })
  async platformSpend(
    @CurrentAdmin() admin: AdminPrincipal,
    @Query() query: PlatformSpendReportQuery,
  ): Promise<PlatformSpendReportView> {
    if (admin.role !== 'PLATFORM_ADMIN')
      throw new ForbiddenException(
        `only a platform admin may read spend across organizations; role ${admin.role} may not`,
      );
    return toPlatformSpendReportView(
      await this.spend.platformSpendReport(query.from, query.to, parsePlatformGroupBy(query.groupBy)),
    );
  }
}

function parsePlatformGroupBy(value: string | undefined): PlatformReportDimension[] {
  if (value === undefined || value.trim() === '') return ['org'];
  const out: PlatformReportDimension[] = [];
  for (const raw of value.split(',')) {
    const name = raw.trim() as PlatformReportDimension;
    if (!PLATFORM_REPORT_DIMENSIONS.includes(name)) {
      throw new ReportingException(
        ReportingExceptionCode.InvalidQuery,
        `groupBy must be a comma-separated list of: ${PLATFORM_REPORT_DIMENSIONS.join(', ')} (got "${raw.trim()}")`,
        'groupBy',
      );
    }
    if (!out.includes(name)) out.push(name);
  }
  return out;
}
