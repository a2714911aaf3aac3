import { Module } from '@nestjs/common';
import { DbModule } from '@tollgate/db';
import { DomainLibsModule } from '../domain-libs.module';
import { AdminSessionService } from '../auth/admin-session.service';
import { SessionController } from './session.controller';
import { SsoController } from './sso.controller';

/** Single sign-on into the admin API: cookie sessions (the auth guard resolves them). */
@Module({
  imports: [DbModule, DomainLibsModule],
  controllers: [SsoController, SessionController],
  providers: [AdminSessionService],
  exports: [AdminSessionService],
})
export class SsoModule {}
