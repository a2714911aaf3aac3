import { Module } from '@nestjs/common';
import { DomainLibsModule } from '../domain-libs.module';
import { PoliciesController } from './policies.controller';
import { PolicyChangesController } from './policy-changes.controller';
import { PolicyChangeService } from './policy-change.service';

/** Allow and deny policies, and their proposed changes. */
@Module({
  imports: [DomainLibsModule],
  controllers: [PoliciesController, PolicyChangesController],
  providers: [PolicyChangeService],
})
export class PoliciesModule {}
