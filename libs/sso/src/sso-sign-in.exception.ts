export enum SsoSignInExceptionCode {
  /** The organisation's identity provider could not be reached or answered something unusable. */
  ProviderUnavailable = 'PROVIDER_UNAVAILABLE',
  /** The sign-in at the identity provider was refused, expired or did not verify. */
  SignInFailed = 'SIGN_IN_FAILED',
  /** The identity provider vouched for an email no Tollgate user of the organisation has. */
  UnknownUser = 'UNKNOWN_USER',
}

/** A sign-in through an organisation's identity provider that cannot go on; the message is shown to the person. */
export class SsoSignInException extends Error {
  constructor(
    readonly code: SsoSignInExceptionCode,
    message: string,
  ) {
    super(message);
    this.name = 'SsoSignInException';
  }
}
