import { Param, ParseEnumPipe } from '@nestjs/common';
import { FieldValidationException } from '../errors/field-validation.exception';

/** An enum path parameter; anything else is a 400 naming the parameter and the values allowed. */
export function EnumParam(name: string, values: Record<string, string>): ParameterDecorator {
  const allowed = Object.values(values);
  return Param(
    name,
    new ParseEnumPipe(values, {
      exceptionFactory: () => new FieldValidationException(name, [`${name} must be one of: ${allowed.join(', ')}`]),
    }),
  );
}
