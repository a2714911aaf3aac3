import { Module } from '@nestjs/common';
import { IdentityModule } from '@tollgate/identity';
import { SingleSignOnModule } from '@tollgate/sso';
import { ConnectionsModule } from '@tollgate/connections';
import { UsersController } from './users.controller';
import { UserOrgRoleController } from './user-org-role.controller';
import { UserOffboardingService } from './user-offboarding.service';

/** People: users, org roles, moves and offboarding. */
@Module({
  imports: [IdentityModule, SingleSignOnModule, ConnectionsModule],
  controllers: [UsersController, UserOrgRoleController],
  providers: [UserOffboardingService],
})
export class UsersModule {}
