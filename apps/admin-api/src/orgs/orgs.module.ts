import { Module } from '@nestjs/common';
import { IdentityModule } from '@tollgate/identity';
import { OrgsController } from './orgs.controller';
import { EmailDomainsController } from './email-domains.controller';

/** Organisations, their settings and claimed email domains. */
@Module({
  imports: [IdentityModule],
  controllers: [OrgsController, EmailDomainsController],
})
export class OrgsModule {}
