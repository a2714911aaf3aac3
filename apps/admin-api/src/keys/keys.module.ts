import { Module } from '@nestjs/common';
import { IdentityModule } from '@tollgate/identity';
import { BudgetModule } from '@tollgate/budget';
import { PolicyModule } from '@tollgate/policy';
import { PricingModule } from '@tollgate/pricing';
import { RateLimitModule } from '@tollgate/rate-limit';
import { CatalogModule } from '@tollgate/upstream-registry';
import { KeysController } from './keys.controller';
import { KeyPreviewController } from './key-preview.controller';
import { EffectivePolicyController } from './effective-policy.controller';
import { KeyAdminService } from './key-admin.service';
import { KeyPreviewService } from './key-preview.service';
import { EffectivePolicyService } from './effective-policy.service';

/** Virtual keys, the preview of what a key sees, and its effective policy. */
@Module({
  imports: [IdentityModule, BudgetModule, PolicyModule, PricingModule, RateLimitModule, CatalogModule],
  controllers: [KeysController, KeyPreviewController, EffectivePolicyController],
  providers: [KeyAdminService, KeyPreviewService, EffectivePolicyService],
})
export class KeysModule {}
