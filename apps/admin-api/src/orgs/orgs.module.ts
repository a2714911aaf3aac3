import { Module } from '@nestjs/common';
import { DomainLibsModule } from '../domain-libs.module';
import { OrgsController } from './orgs.controller';
import { EmailDomainsController } from './email-domains.controller';

/** Organisations, their settings and claimed email domains. */
@Module({
  imports: [DomainLibsModule],
  controllers: [OrgsController, EmailDomainsController],
})
export class OrgsModule {}
