import { HttpStatus } from '@nestjs/common';
import { DomainException } from '@tollgate/kernel';

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

/** The HTTP status each code is answered with (a Record over the codes: a new code does not compile without one). */
const HTTP_STATUS: Record<IdentityExceptionCode, number> = {
  [IdentityExceptionCode.OrgNotFound]: HttpStatus.NOT_FOUND,
  [IdentityExceptionCode.TeamNotFound]: HttpStatus.NOT_FOUND,
  [IdentityExceptionCode.UserNotFound]: HttpStatus.NOT_FOUND,
  [IdentityExceptionCode.KeyNotFound]: HttpStatus.NOT_FOUND,
  [IdentityExceptionCode.AdminTokenNotFound]: HttpStatus.NOT_FOUND,
  [IdentityExceptionCode.NotATeamMember]: HttpStatus.BAD_REQUEST,
  [IdentityExceptionCode.InvalidEmailDomain]: HttpStatus.BAD_REQUEST,
  [IdentityExceptionCode.Conflict]: HttpStatus.CONFLICT,
  [IdentityExceptionCode.KeyRevoked]: HttpStatus.CONFLICT,
  [IdentityExceptionCode.OrgNotDisabled]: HttpStatus.CONFLICT,
  [IdentityExceptionCode.UserOffboarded]: HttpStatus.CONFLICT,
  [IdentityExceptionCode.EmailDomainClaimed]: HttpStatus.CONFLICT,
};

export class IdentityException extends DomainException<IdentityExceptionCode> {
  get httpStatus(): number {
    return HTTP_STATUS[this.code];
  }
}
