import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsString, Length, Matches } from 'class-validator';
import { IsCurrencyCode } from '../common/validation/currency.validator';
import { propertyStack } from '../common/validation/property-stack';
import { IsIanaTimeZone } from '../common/validation/time-zone.validator';

/** The org's currency, in a create or a PATCH body (absent: USD at creation, unchanged in a PATCH). */
export function OptionalOrgCurrency(): PropertyDecorator {
  return propertyStack(
    ApiPropertyOptional({
      example: 'EUR',
      default: 'USD',
      description: 'ISO 4217 code naming the unit of the org\u2019s amounts (micro-units; nothing is converted)',
    }),
    IsOptional(),
    IsCurrencyCode(),
  );
}

export class CreateOrgDto {
  @ApiProperty({ example: 'Acme Corp', maxLength: 200 })
  @IsString()
  @Length(1, 200)
  name!: string;

  @ApiProperty({
    example: 'acme',
    description: 'Unique, lower-case letters, digits and single hyphens',
    pattern: '^[a-z0-9]+(-[a-z0-9]+)*$',
  })
  @IsString()
  @Length(2, 63)
  @Matches(/^[a-z0-9]+(-[a-z0-9]+)*$/, { message: 'slug must be lower-case letters, digits and single hyphens' })
  slug!: string;

  @ApiPropertyOptional({
    example: 'Europe/Paris',
    default: 'UTC',
    description:
      'An IANA time zone (`Area/Location` or `UTC`; offsets such as `UTC+2` are refused). Budget periods are calendar-aligned in this zone',
  })
  @IsOptional()
  @IsIanaTimeZone()
  timeZone?: string;

  @OptionalOrgCurrency()
  currency?: string;

  @ApiPropertyOptional({
    default: true,
    description: 'Serve new or changed tool definitions at once (true) or hold them for review (false)',
  })
  @IsOptional()
  @IsBoolean()
  autoApproveTools?: boolean;
}
