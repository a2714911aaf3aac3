import { ValidationOptions, ValidateBy, buildMessage } from 'class-validator';

/** Money arrives as a JSON integer of micro-units: a number, safe, whole and not negative. */
export function isMicrosAmount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** Rejects strings, fractions, negatives and integers beyond 2^53 (which JSON cannot carry exactly). */
export function IsMicros(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isMicros',
      validator: {
        validate: (value) => isMicrosAmount(value),
        defaultMessage: buildMessage(
          (each) =>
            `${each}$property must be a non-negative whole number of micro-units (a JSON integer, no fractions, below 2^53)`,
          options,
        ),
      },
    },
    options,
  );
}
