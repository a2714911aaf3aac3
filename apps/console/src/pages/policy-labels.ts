import type { Key, Team, User } from '../api/admin-types';
import type { PolicyScope } from '../api/oversight-types';

/** The org's teams, users and keys, which policies name as scopes. */
export interface Directory {
  teams: Team[];
  users: User[];
  keys: Key[];
}

export const SCOPE_LABELS: Record<PolicyScope, string> = {
  ORG: 'Organisation',
  TEAM: 'Team',
  USER: 'User',
  KEY: 'Key',
};

export const REFUSAL_LABELS: Record<string, string> = {
  DENIED_BY_RULE: 'Denied by rule',
  NOT_IN_ALLOW_LIST: 'Not in allow list',
  NO_ALLOW_LIST: 'No allow list anywhere',
  KEY_REVOKED: 'Key revoked',
  KEY_EXPIRED: 'Key expired',
};
