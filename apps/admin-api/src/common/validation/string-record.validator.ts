import { ValidationOptions, ValidateBy, buildMessage } from 'class-validator';

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/;
const MAX_HEADERS = 50;

/** `{ "Header-Name": "value" }` with RFC 7230 token names, string values without line breaks. */
export function isHeaderRecord(value: unknown): value is Record<string, string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_HEADERS) return false;
  return entries.every(
    ([k, v]) => HEADER_NAME.test(k) && typeof v === 'string' && v.length <= 8192 && !/[\r\n]/.test(v),
  );
}

export function IsHeaderRecord(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isHeaderRecord',
      validator: {
        validate: (value) => isHeaderRecord(value),
        defaultMessage: buildMessage(
          (each) =>
            `${each}$property must be an object of at most ${MAX_HEADERS} HTTP header names to string values (no line breaks)`,
          options,
        ),
      },
    },
    options,
  );
}
