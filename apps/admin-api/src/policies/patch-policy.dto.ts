import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsOptional, IsString, ValidateNested } from 'class-validator';
import { PutPolicyDto } from './put-policy.dto';

/** Patterns added to and removed from one list; the rest of the list stays as it is. */
export class PatternListPatchDto {
  @ApiPropertyOptional({ type: [String], example: ['github:search_*'] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(500)
  @IsString({ each: true })
  add?: string[];

  @ApiPropertyOptional({ type: [String], example: ['github:delete_*'] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(500)
  @IsString({ each: true })
  remove?: string[];
}

/** A PATCH of one level's policy: add or remove patterns of any list; the other lists and settings are kept. */
export class PatchPolicyDto {
  @ApiPropertyOptional({ type: PatternListPatchDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => PatternListPatchDto)
  allow?: PatternListPatchDto;
  @ApiPropertyOptional({ type: PatternListPatchDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => PatternListPatchDto)
  deny?: PatternListPatchDto;
  @ApiPropertyOptional({ type: PatternListPatchDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => PatternListPatchDto)
  autoExecute?: PatternListPatchDto;
  @ApiPropertyOptional({ type: PatternListPatchDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => PatternListPatchDto)
  resourceAllow?: PatternListPatchDto;
  @ApiPropertyOptional({ type: PatternListPatchDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => PatternListPatchDto)
  resourceDeny?: PatternListPatchDto;
  @ApiPropertyOptional({ type: PatternListPatchDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => PatternListPatchDto)
  promptAllow?: PatternListPatchDto;
  @ApiPropertyOptional({ type: PatternListPatchDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => PatternListPatchDto)
  promptDeny?: PatternListPatchDto;
}

/** A dry run: the policy the level would get (a whole replacement, a patch of the current one, or both). */
export class PolicyDryRunDto extends PatchPolicyDto {
  @ApiPropertyOptional({
    type: PutPolicyDto,
    description: 'A whole new policy for the level (as a PUT); a patch in the same body applies on top of it',
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => PutPolicyDto)
  replace?: PutPolicyDto;
}

export class KeyAccessChangeView {
  @ApiProperty({ format: 'uuid' }) keyId!: string;
  @ApiProperty() keyName!: string;
  @ApiProperty({ format: 'uuid' }) teamId!: string;
  @ApiProperty({ format: 'uuid' }) userId!: string;
  @ApiProperty({ type: [String], description: 'Exposed tool names the key would gain' }) gained!: string[];
  @ApiProperty({ type: [String], description: 'Exposed tool names the key would lose' }) lost!: string[];
}

export class PolicyDryRunView {
  @ApiProperty() scope!: string;
  @ApiProperty({ format: 'uuid' }) scopeId!: string;
  @ApiProperty({ type: [String] }) allow!: string[];
  @ApiProperty({ type: [String] }) deny!: string[];
  @ApiProperty({ description: 'Active keys under the level that were compared' }) keysEvaluated!: number;
  @ApiProperty({ type: [KeyAccessChangeView], description: 'Only keys whose tools would change' })
  changes!: KeyAccessChangeView[];
}
