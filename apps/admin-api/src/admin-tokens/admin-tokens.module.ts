import { Module } from '@nestjs/common';
import { IdentityModule } from '@tollgate/identity';
import { AdminTokensController } from './admin-tokens.controller';
import { AdminTokenAdminService } from './admin-token-admin.service';

/** Admin tokens: list, issue, revoke. */
@Module({
  imports: [IdentityModule],
  controllers: [AdminTokensController],
  providers: [AdminTokenAdminService],
})
export class AdminTokensModule {}
