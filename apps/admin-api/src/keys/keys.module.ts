import { Module } from '@nestjs/common';
import { DomainLibsModule } from '../domain-libs.module';
import { KeysController } from './keys.controller';
import { KeyPreviewController } from './key-preview.controller';
import { EffectivePolicyController } from './effective-policy.controller';
import { KeyAdminService } from './key-admin.service';
import { KeyPreviewService } from './key-preview.service';
import { EffectivePolicyService } from './effective-policy.service';

/** Virtual keys, the preview of what a key sees, and its effective policy. */
@Module({
  imports: [DomainLibsModule],
  controllers: [KeysController, KeyPreviewController, EffectivePolicyController],
  providers: [KeyAdminService, KeyPreviewService, EffectivePolicyService],
})
export class KeysModule {}
