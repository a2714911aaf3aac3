import { Param, ParseUUIDPipe } from '@nestjs/common';
import { FieldValidationException } from '../errors/field-validation.exception';

/** A UUID path parameter; anything else is a 400 naming the parameter. */
export function UuidParam(name: string): ParameterDecorator {
  return Param(
    name,
    new ParseUUIDPipe({ exceptionFactory: () => new FieldValidationException(name, [`${name} must be a UUID`]) }),
  );
}
