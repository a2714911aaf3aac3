import { Module } from '@nestjs/common';
import { PolicyModule } from '@tollgate/policy';
import { CatalogModule } from '@tollgate/upstream-registry';
import { PoliciesController } from './policies.controller';
import { PolicyChangesController } from './policy-changes.controller';
import { PolicyChangeService } from './policy-change.service';

/** Allow and deny policies, and their proposed changes. */
@Module({
  imports: [PolicyModule, CatalogModule],
  controllers: [PoliciesController, PolicyChangesController],
  providers: [PolicyChangeService],
})
export class PoliciesModule {}
