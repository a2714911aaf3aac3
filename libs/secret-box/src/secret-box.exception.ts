export enum SecretBoxExceptionCode {
  NoKeys = 'SECRET_BOX_NO_KEYS',
  UnknownKey = 'SECRET_BOX_UNKNOWN_KEY',
  Malformed = 'SECRET_BOX_MALFORMED',
  Tampered = 'SECRET_BOX_TAMPERED',
}

/** A sealed value could not be opened. The message never contains the value or a key. */
export class SecretBoxException extends Error {
  constructor(
    readonly code: SecretBoxExceptionCode,
    message: string,
  ) {
    super(message);
    this.name = 'SecretBoxException';
  }
}
