import { ApiPropertyOptional } from '@nestjs/swagger';
import type { PutPolicyInput } from '@tollgate/policy';
import { ArrayMaxSize, IsArray, IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { DISCLOSURE_MODES, DisclosureModeName } from '@tollgate/kernel';

const RESOURCE_PATTERN_HELP =
  '`namespace:uri` globs: `*` in the URI part matches any characters (URIs hold `:` and `/`); a pattern without a colon means every resource of the namespace';
const PATTERN_HELP =
  '`namespace:tool` globs: `*` matches any run of characters but `:`, `?` one; a pattern without a colon means every tool of the namespace';

/** The whole policy of one scope: a PUT replaces it, so omitted settings are cleared. */
export class PutPolicyDto {
  @ApiPropertyOptional({
    type: [String],
    example: ['github:*', 'docs:search_*'],
    description: `Allowed tools, ${PATTERN_HELP}. Empty or omitted: this level does not narrow (a deny-only policy).`,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(500)
  @IsString({ each: true })
  allow?: string[];

  @ApiPropertyOptional({
    type: [String],
    example: ['github:delete_*'],
    description: `Denied tools (deny wins at every level), ${PATTERN_HELP}. Omitted: none.`,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(500)
  @IsString({ each: true })
  deny?: string[];

  @ApiPropertyOptional({
    type: [String],
    nullable: true,
    example: ['docs:*'],
    description: 'Tools the agent may run without asking its user (null or omitted: none)',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(500)
  @IsString({ each: true })
  autoExecute?: string[] | null;

  @ApiPropertyOptional({
    type: [String],
    nullable: true,
    example: ['docs:*', 'docs:file:///public/*'],
    description: `Allowed resources: ${RESOURCE_PATTERN_HELP}. Omitted or empty at every level: no resource is allowed.`,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(500)
  @IsString({ each: true })
  resourceAllow?: string[] | null;

  @ApiPropertyOptional({
    type: [String],
    nullable: true,
    example: ['docs:file:///secret/*'],
    description: `Denied resources (deny wins), ${RESOURCE_PATTERN_HELP}; a read it denies is refused naming the rule`,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(500)
  @IsString({ each: true })
  resourceDeny?: string[] | null;

  @ApiPropertyOptional({
    type: [String],
    nullable: true,
    example: ['docs:*'],
    description: `Allowed prompts, ${PATTERN_HELP.replace(/tool/g, 'prompt')}. Omitted or empty at every level: no prompt is allowed.`,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(500)
  @IsString({ each: true })
  promptAllow?: string[] | null;

  @ApiPropertyOptional({
    type: [String],
    nullable: true,
    example: ['docs:internal_*'],
    description: `Denied prompts (deny wins), ${PATTERN_HELP.replace(/tool/g, 'prompt')}`,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(500)
  @IsString({ each: true })
  promptDeny?: string[] | null;

  @ApiPropertyOptional({
    enum: DISCLOSURE_MODES,
    nullable: true,
    description: 'How the edge discloses tools (null or omitted: not set at this level)',
  })
  @IsOptional()
  @IsIn(DISCLOSURE_MODES, { message: `disclosureMode must be one of: ${DISCLOSURE_MODES.join(', ')}` })
  disclosureMode?: DisclosureModeName | null;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    nullable: true,
    description: 'Ceiling on the tokens of one disclosure answer (null or omitted: none at this level)',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  maxAnswerTokens?: number | null;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    nullable: true,
    description: 'Ceiling on the schema tokens loaded into one session (null or omitted: none at this level)',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  maxSessionSchemaTokens?: number | null;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    nullable: true,
    description: 'Output token cap for tool results (null or omitted: none at this level)',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  outputTokenCap?: number | null;

  @ApiPropertyOptional({
    enum: ['PAGE', 'REFUSE'],
    nullable: true,
    description:
      'A text result over the output cap is paged (default) or refused with OUTPUT_BUDGET_EXCEEDED (null or omitted: not set at this level)',
  })
  @IsOptional()
  @IsIn(['PAGE', 'REFUSE'], { message: 'outputOverflow must be one of: PAGE, REFUSE' })
  outputOverflow?: 'PAGE' | 'REFUSE' | null;
}

/** A whole policy as the service takes it: absent allow and deny lists are empty, null optional lists absent. */
export function toPutPolicyInput(dto: PutPolicyDto): PutPolicyInput {
  return {
    ...dto,
    allow: dto.allow ?? [],
    deny: dto.deny ?? [],
    autoExecute: dto.autoExecute ?? undefined,
    resourceAllow: dto.resourceAllow ?? undefined,
    resourceDeny: dto.resourceDeny ?? undefined,
    promptAllow: dto.promptAllow ?? undefined,
    promptDeny: dto.promptDeny ?? undefined,
  };
}
