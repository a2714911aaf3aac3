import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { REPORT_DIMENSIONS } from '@tollgate/reporting';

export const REPORT_FORMATS = ['json', 'csv'] as const;

export class SpendReportQuery {
  @ApiProperty({ example: '2026-11-01', description: 'First UTC day, inclusive (YYYY-MM-DD)' })
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'from must be a date YYYY-MM-DD' })
  from!: string;

  @ApiProperty({ example: '2026-11-30', description: 'Last UTC day, inclusive (YYYY-MM-DD)' })
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'to must be a date YYYY-MM-DD' })
  to!: string;

  @ApiPropertyOptional({ example: 'team,day', description: `Comma-separated breakdown: ${REPORT_DIMENSIONS.join(', ')}; none gives one total row` })
  @IsOptional()
  @IsString({ message: 'groupBy must be a comma-separated list' })
  @MaxLength(100)
  groupBy?: string;

  @ApiPropertyOptional({ enum: REPORT_FORMATS, description: 'csv, or send Accept: text/csv' })
  @IsOptional()
  @IsIn(REPORT_FORMATS, { message: `format must be one of: ${REPORT_FORMATS.join(', ')}` })
  format?: (typeof REPORT_FORMATS)[number];
}

export class RollupRequestDto {
  @ApiProperty({ example: '2026-11-22', description: 'UTC day to recompute (YYYY-MM-DD)' })
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'day must be a date YYYY-MM-DD' })
  day!: string;
}
