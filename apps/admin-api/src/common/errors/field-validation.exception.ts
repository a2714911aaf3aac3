import { BadRequestException } from '@nestjs/common';

/** A 400 that names the request field at fault and lists every problem found. */
export class FieldValidationException extends BadRequestException {
  constructor(
    readonly field: string,
    readonly messages: string[],
  ) {
    super(messages.length === 1 ? messages[0] : messages);
  }
}
