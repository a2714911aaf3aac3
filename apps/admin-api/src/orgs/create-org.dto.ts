import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { isValidTimeZone } from '@tollgate/kernel';
import { IsBoolean, IsOptional, IsString, Length, Matches, Validate, ValidatorConstraint, ValidatorConstraintInterface } from 'class-validator';

@ValidatorConstraint({ name: 'isTimeZone' })
class IsTimeZoneConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return typeof value === 'string' && value.length <= 64 && isValidTimeZone(value);
  }
  defaultMessage(): string {
    return 'timeZone must be an IANA time zone such as "Europe/Paris" or "UTC"';
  }
}

export class CreateOrgDto {
  @ApiProperty({ example: 'Acme Corp', maxLength: 200 })
  @IsString()
  @Length(1, 200)
  name!: string;

  @ApiProperty({ example: 'acme', description: 'Unique, lower-case letters, digits and single hyphens', pattern: '^[a-z0-9]+(-[a-z0-9]+)*$' })
  @IsString()
  @Length(2, 63)
  @Matches(/^[a-z0-9]+(-[a-z0-9]+)*$/, { message: 'slug must be lower-case letters, digits and single hyphens' })
  slug!: string;

  @ApiPropertyOptional({ example: 'Europe/Paris', default: 'UTC', description: 'Budget periods are calendar-aligned in this zone' })
  @IsOptional()
  @Validate(IsTimeZoneConstraint)
  timeZone?: string;

  @ApiPropertyOptional({ default: true, description: 'Serve new or changed tool definitions at once (true) or hold them for review (false)' })
  @IsOptional()
  @IsBoolean()
  autoApproveTools?: boolean;
}
