export enum IdentityExceptionCode {
  OrgNotFound = 'ORG_NOT_FOUND',
  TeamNotFound = 'TEAM_NOT_FOUND',
  UserNotFound = 'USER_NOT_FOUND',
  KeyNotFound = 'KEY_NOT_FOUND',
  KeyRevoked = 'KEY_REVOKED',
  NotATeamMember = 'NOT_A_TEAM_MEMBER',
  Conflict = 'CONFLICT',
  AdminTokenNotFound = 'ADMIN_TOKEN_NOT_FOUND',
  /** Deleting an organisation needs it disabled first. */
  OrgNotDisabled = 'ORG_NOT_DISABLED',
  /** An offboarded user gets no new key, token or membership. */
  UserOffboarded = 'USER_OFFBOARDED',
  /** The email's domain is claimed by another organisation. */
  EmailDomainClaimed = 'EMAIL_DOMAIN_CLAIMED',
  InvalidEmailDomain = 'INVALID_EMAIL_DOMAIN',
}

export class IdentityException extends Error {
  constructor(
    readonly code: IdentityExceptionCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'IdentityException';
  }
}
