import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, ValidationOptions, ValidateBy, buildMessage, isISO8601 } from 'class-validator';
import { propertyStack } from './property-stack';

/** An ISO 8601 timestamp later than now. */
export function IsFutureIsoDate(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isFutureIsoDate',
      validator: {
        validate: (value) =>
          typeof value === 'string' && isISO8601(value, { strict: true }) && Date.parse(value) > Date.now(),
        defaultMessage: buildMessage((each) => `${each}$property must be an ISO 8601 timestamp in the future`, options),
      },
    },
    options,
  );
}

/** An optional `expiresAt` of a PATCH body: a future timestamp, or null to clear the expiry. */
export function OptionalExpiresAt(): PropertyDecorator {
  return propertyStack(
    ApiPropertyOptional({
      nullable: true,
      type: String,
      example: '2030-01-01T00:00:00Z',
      description: 'A future time, or null for no expiry',
    }),
    IsOptional(),
    IsFutureIsoDate(),
  );
}
