export enum IdentityExceptionCode {
  OrgNotFound = 'ORG_NOT_FOUND',
  TeamNotFound = 'TEAM_NOT_FOUND',
  UserNotFound = 'USER_NOT_FOUND',
  KeyNotFound = 'KEY_NOT_FOUND',
  KeyRevoked = 'KEY_REVOKED',
  NotATeamMember = 'NOT_A_TEAM_MEMBER',
  Conflict = 'CONFLICT',
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
