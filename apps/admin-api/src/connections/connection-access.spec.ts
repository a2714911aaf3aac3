import type { AdminPrincipal } from '@tollgate/identity';
import { describe, expect, it } from 'vitest';
import { assertMayManageConnectionsOf } from './connection-access';

const ALICE = '11111111-1111-4111-8111-111111111111';
const BOB = '22222222-2222-4222-8222-222222222222';
const p = (role: AdminPrincipal['role'], userId: string | null = null): AdminPrincipal => ({
  tokenId: 't',
  role,
  orgId: 'o',
  teamId: null,
  userId,
});

describe('assertMayManageConnectionsOf', () => {
  it('should let org and platform admins manage anyone’s connections', () => {
    expect(() => assertMayManageConnectionsOf(p('ORG_ADMIN'), BOB)).not.toThrow();
    expect(() => assertMayManageConnectionsOf(p('PLATFORM_ADMIN'), BOB)).not.toThrow();
  });

  it('should let a member manage only their own connections', () => {
    expect(() => assertMayManageConnectionsOf(p('MEMBER', ALICE), ALICE)).not.toThrow();
    expect(() => assertMayManageConnectionsOf(p('MEMBER', ALICE), BOB)).toThrow(/own user/);
    expect(() => assertMayManageConnectionsOf(p('FINANCE'), BOB)).toThrow();
  });
});
