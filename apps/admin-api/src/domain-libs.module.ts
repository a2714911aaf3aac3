import { Module } from '@nestjs/common';
import { BudgetModule } from '@tollgate/budget';
import { CatalogModule } from '@tollgate/catalog';
import { ConnectionsModule } from '@tollgate/connections';
import { IdentityModule } from '@tollgate/identity';
import { OAuthServerModule } from '@tollgate/oauth-server';
import { PolicyModule } from '@tollgate/policy';
import { PricingModule } from '@tollgate/pricing';
import { RateLimitModule } from '@tollgate/rate-limit';
import { ReportingModule } from '@tollgate/reporting';
import { AuditService } from './audit/audit.service';
import { BUDGET_COUNTERS_PROVIDER } from './reports/budget-counters.provider';

// Configured once: a dynamic module imported twice would be two instances.
const REPORTING = ReportingModule.register({ imports: [BudgetModule], budgetCounters: BUDGET_COUNTERS_PROVIDER });

const LIBS = [
  IdentityModule,
  CatalogModule,
  ConnectionsModule,
  BudgetModule,
  RateLimitModule,
  PricingModule,
  PolicyModule,
  OAuthServerModule,
];

/**
 * The domain libs the admin API's feature modules work through, and the audit trail's reader and
 * writer: each feature imports this one module instead of listing the libs it happens to use.
 */
@Module({
  imports: [...LIBS, REPORTING],
  providers: [AuditService],
  exports: [...LIBS, REPORTING, AuditService],
})
export class DomainLibsModule {}
