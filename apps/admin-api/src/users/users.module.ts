import { Module } from '@nestjs/common';
import { DomainLibsModule } from '../domain-libs.module';
import { UsersController } from './users.controller';
import { UserOrgRoleController } from './user-org-role.controller';
import { UserOffboardingService } from './user-offboarding.service';

/** People: users, org roles, moves and offboarding. */
@Module({
  imports: [DomainLibsModule],
  controllers: [UsersController, UserOrgRoleController],
  providers: [UserOffboardingService],
})
export class UsersModule {}
