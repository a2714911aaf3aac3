import { ValidateBy, ValidationOptions, buildMessage } from 'class-validator';

const SUPPORTED_CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

/** An ISO 4217 code the runtime knows (`USD`, `EUR`, `JPY`): upper case, three letters. */
export function isCurrencyCode(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Z]{3}$/.test(value) && SUPPORTED_CURRENCIES.has(value);
}

export function IsCurrencyCode(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isCurrencyCode',
      validator: {
        validate: (value) => isCurrencyCode(value),
        defaultMessage: buildMessage(
          (each) => `${each}$property must be an ISO 4217 currency code such as "USD" or "EUR"`,
          options,
        ),
      },
    },
    options,
  );
}
