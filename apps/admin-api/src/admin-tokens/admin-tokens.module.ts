import { Module } from '@nestjs/common';
import { DomainLibsModule } from '../domain-libs.module';
import { AdminTokensController } from './admin-tokens.controller';
import { AdminTokenAdminService } from './admin-token-admin.service';

/** Admin tokens: list, issue, revoke. */
@Module({
  imports: [DomainLibsModule],
  controllers: [AdminTokensController],
  providers: [AdminTokenAdminService],
})
export class AdminTokensModule {}
