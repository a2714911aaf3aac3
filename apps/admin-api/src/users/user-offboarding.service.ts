import { Injectable } from '@nestjs/common';
import type { AuditedBy } from '@tollgate/audit';
import { UserConnectionService } from '@tollgate/connections';
import { PeopleAdminService } from '@tollgate/identity';
import { SignInCodeService } from '@tollgate/sso';
import type { OffboardedUserView } from './user.view';

/**
 * Offboarding in one call: in one transaction with its audit row, the user marked, keys of every
 * kind and admin tokens revoked, memberships ended and upstream connections forgotten (announced
 * to every edge after); then their sign-in code, which lives in Redis, voided. Both steps are
 * idempotent, so a failed call can be repeated.
 */
@Injectable()
export class UserOffboardingService {
  constructor(
    private readonly people: PeopleAdminService,
    private readonly connections: UserConnectionService,
    private readonly signInCodes: SignInCodeService,
  ) {}

  async offboard(
    orgId: string,
    userId: string,
    audit: AuditedBy<Omit<OffboardedUserView, 'userId'>>,
  ): Promise<OffboardedUserView> {
    const done = await this.people.offboardUser(
      orgId,
      userId,
      async (tx) => ({ disconnectedUpstreamIds: await this.connections.disconnectAll(orgId, userId, tx) }),
      audit,
    );
    await this.signInCodes.revokeFor(userId);
    return { userId, ...done };
  }
}
