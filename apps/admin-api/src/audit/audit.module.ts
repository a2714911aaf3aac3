import { Module } from '@nestjs/common';
import { DomainLibsModule } from '../domain-libs.module';
import { AuditController } from './audit.controller';

/** Reading the audit trail. */
@Module({
  imports: [DomainLibsModule],
  controllers: [AuditController],
})
export class AuditFeatureModule {}
