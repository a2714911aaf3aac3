import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { DISCLOSURE_MODES, DisclosureModeName } from '../keys/create-key.dto';

const PATTERN_HELP = '`namespace:tool` globs: `*` matches any run of characters but `:`, `?` one; a pattern without a colon means every tool of the namespace';

/** The whole policy of one scope: a PUT replaces it, so omitted settings are cleared. */
export class PutPolicyDto {
  @ApiProperty({ type: [String], example: ['github:*', 'docs:search_*'], description: `Allowed tools, ${PATTERN_HELP}. Empty: this level does not narrow.` })
  @IsArray()
  @ArrayMaxSize(500)
  @IsString({ each: true })
  allow!: string[];

  @ApiProperty({ type: [String], example: ['github:delete_*'], description: `Denied tools (deny wins at every level), ${PATTERN_HELP}` })
  @IsArray()
  @ArrayMaxSize(500)
  @IsString({ each: true })
  deny!: string[];

  @ApiPropertyOptional({ type: [String], example: ['docs:*'], description: 'Tools the agent may run without asking its user' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(500)
  @IsString({ each: true })
  autoExecute?: string[];

  @ApiPropertyOptional({ enum: DISCLOSURE_MODES, nullable: true })
  @IsOptional()
  @IsIn(DISCLOSURE_MODES, { message: `disclosureMode must be one of: ${DISCLOSURE_MODES.join(', ')}` })
  disclosureMode?: DisclosureModeName;

  @ApiPropertyOptional({ minimum: 1, description: 'Ceiling on the tokens of one disclosure answer' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  maxAnswerTokens?: number;

  @ApiPropertyOptional({ minimum: 1, description: 'Ceiling on the schema tokens loaded into one session' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  maxSessionSchemaTokens?: number;

  @ApiPropertyOptional({ minimum: 1, description: 'Output token cap for tool results' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  outputTokenCap?: number;

  @ApiPropertyOptional({ enum: ['PAGE', 'REFUSE'], description: 'A text result over the output cap is paged (default) or refused with OUTPUT_BUDGET_EXCEEDED' })
  @IsOptional()
  @IsIn(['PAGE', 'REFUSE'], { message: 'outputOverflow must be one of: PAGE, REFUSE' })
  outputOverflow?: 'PAGE' | 'REFUSE';
}
