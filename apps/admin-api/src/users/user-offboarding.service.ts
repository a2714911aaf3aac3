import { Injectable } from '@nestjs/common';
import { UserConnectionService } from '@tollgate/connections';
import { PeopleAdminService } from '@tollgate/identity';
import { SignInCodeService } from '@tollgate/oauth-server';
import type { OffboardedUserView } from './user.view';

/**
 * Offboarding in one call: identity first (user marked, keys of every kind and admin tokens
 * revoked, memberships ended, in one transaction, announced to every edge), then the user's
 * upstream connections forgotten and their sign-in code voided. Both steps are idempotent, so a failed call can be repeated.
 */
@Injectable()
export class UserOffboardingService {
  constructor(
    private readonly people: PeopleAdminService,
    private readonly connections: UserConnectionService,
    private readonly signInCodes: SignInCodeService,
  ) {}

  async offboard(orgId: string, userId: string): Promise<OffboardedUserView> {
    const identity = await this.people.offboardUser(orgId, userId);
    const disconnectedUpstreamIds = await this.connections.disconnectAll(orgId, userId);
    await this.signInCodes.revokeFor(userId);
    return { userId, ...identity, disconnectedUpstreamIds };
  }
}
