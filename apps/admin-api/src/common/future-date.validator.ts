import { ValidationOptions, ValidateBy, buildMessage, isISO8601 } from 'class-validator';

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
