import { HttpStatus } from '@nestjs/common';
import { DomainException, unmappedCode } from '@tollgate/kernel';

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

export class IdentityException extends DomainException<IdentityExceptionCode> {
  constructor(code: IdentityExceptionCode, message: string, field?: string) {
    super(code, message, field);
    this.name = 'IdentityException';
  }

  get httpStatus(): number {
    return identityHttpStatus(this.code);
  }
}

/** The HTTP status each code is answered with. */
function identityHttpStatus(code: IdentityExceptionCode): number {
  switch (code) {
    case IdentityExceptionCode.OrgNotFound:
    case IdentityExceptionCode.TeamNotFound:
    case IdentityExceptionCode.UserNotFound:
    case IdentityExceptionCode.KeyNotFound:
    case IdentityExceptionCode.AdminTokenNotFound:
      return HttpStatus.NOT_FOUND;
    case IdentityExceptionCode.NotATeamMember:
    case IdentityExceptionCode.InvalidEmailDomain:
      return HttpStatus.BAD_REQUEST;
    case IdentityExceptionCode.Conflict:
    case IdentityExceptionCode.KeyRevoked:
    case IdentityExceptionCode.OrgNotDisabled:
    case IdentityExceptionCode.UserOffboarded:
    case IdentityExceptionCode.EmailDomainClaimed:
      return HttpStatus.CONFLICT;
    default:
      return unmappedCode(code);
  }
}
