import { ValidationError } from 'class-validator';
import { FieldValidationException } from '../errors/field-validation.exception';

/** Flattens nested errors into `path: [messages]`, in the order class-validator found them. */
export function flattenValidationErrors(
  errors: readonly ValidationError[],
  parent = '',
): { path: string; messages: string[] }[] {
  const out: { path: string; messages: string[] }[] = [];
  for (const error of errors) {
    const path = parent
      ? /^\d+$/.test(error.property)
        ? `${parent}[${error.property}]`
        : `${parent}.${error.property}`
      : error.property;
    const messages = Object.values(error.constraints ?? {});
    if (messages.length > 0) out.push({ path, messages });
    if (error.children?.length) out.push(...flattenValidationErrors(error.children, path));
  }
  return out;
}

/** For the global ValidationPipe: the first failing property is the `field`; every message is listed. */
export function validationExceptionFactory(errors: ValidationError[]): FieldValidationException {
  const flat = flattenValidationErrors(errors);
  if (flat.length === 0) return new FieldValidationException('body', ['request body is invalid']);
  return new FieldValidationException(
    flat[0].path,
    flat.flatMap((e) => e.messages),
  );
}
