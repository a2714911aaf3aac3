import { isIanaTimeZone } from '@tollgate/kernel';
import { ValidateBy, ValidationOptions, buildMessage } from 'class-validator';

export function IsIanaTimeZone(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isIanaTimeZone',
      validator: {
        validate: (value) => isIanaTimeZone(value),
        defaultMessage: buildMessage(
          (each) =>
            `${each}$property must be an IANA time zone such as "Europe/Paris" or "UTC" (offsets like "UTC+2" are not accepted)`,
          options,
        ),
      },
    },
    options,
  );
}
