export enum PolicyAdminExceptionCode {
  InvalidPattern = 'POLICY_INVALID_PATTERN',
  InvalidSetting = 'POLICY_INVALID_SETTING',
  ScopeNotFound = 'POLICY_SCOPE_NOT_FOUND',
}

export class PolicyAdminException extends Error {
  constructor(
    readonly code: PolicyAdminExceptionCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'PolicyAdminException';
  }
}
