import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { AdminConfig, ConfigModule } from '@tollgate/config';
import type { Clock } from '@tollgate/kernel';
import { DbModule } from '@tollgate/db';
import { queueTelemetry } from '@tollgate/observability';
import { QueueModule } from '@tollgate/queue';
import { RedisModule } from '@tollgate/redis';
import { AdminAuthGuard } from './auth/admin-auth.guard';
import { ADMIN_BEARER_STRATEGY, AdminBearerStrategy } from './auth/admin-bearer.strategy';
import { OrgScopeGuard } from './auth/org-scope.guard';
import { AdminExceptionFilter } from './common/errors/admin-exception.filter';
import { AdminValidationPipe } from './common/validation/admin-validation.pipe';
import { IdentityModule } from '@tollgate/identity';
import { KeyScopeGuard } from './keys/key-scope.guard';
import { OAuthModule } from './oauth/oauth.module';
import { SsoModule } from './sso/sso.module';
import { ToolProfilerModule } from '@tollgate/disclosure';
import { HealthModule } from './health/health.module';
import { ConnectionsFeatureModule } from './connections/connections.module';
import { OrgsModule } from './orgs/orgs.module';
import { AdminTokensModule } from './admin-tokens/admin-tokens.module';
import { TeamsModule } from './teams/teams.module';
import { UsersModule } from './users/users.module';
import { KeysModule } from './keys/keys.module';
import { UpstreamsModule } from './upstreams/upstreams.module';
import { PoliciesModule } from './policies/policies.module';
import { PricesModule } from './prices/prices.module';
import { BudgetsModule } from './budgets/budgets.module';
import { RateLimitsModule } from './rate-limits/rate-limits.module';
import { AuditFeatureModule } from './audit/audit.module';
import { ReportsModule } from './reports/reports.module';
import { CallsModule } from './calls/calls.module';
import { TrailModule } from './trail/trail.module';
import { AlertsModule } from './alerts/alerts.module';
import { ToolsModule } from './tools/tools.module';

/**
 * The admin API process: one Nest module per feature (each folder's `<feature>.module.ts`, its
 * controllers and use cases over the domain libs), plus the stores, authentication, and the guards,
 * filter and pipe every request passes.
 */
@Module({})
export class AdminApiModule {
  static forRoot(config: AdminConfig, clock?: Clock): DynamicModule {
    return {
      module: AdminApiModule,
      imports: [
        ConfigModule.forRoot(config, clock),
        DbModule,
        RedisModule,
        QueueModule.forRoot({ producerOnly: true, telemetry: queueTelemetry() }),
        ToolProfilerModule,
        // The guards below resolve admin tokens and scopes through the identity lib.
        IdentityModule,
        PassportModule.register({ defaultStrategy: ADMIN_BEARER_STRATEGY, session: false }),
        OAuthModule,
        SsoModule,
        HealthModule,
        ConnectionsFeatureModule,
        OrgsModule,
        AdminTokensModule,
        TeamsModule,
        UsersModule,
        KeysModule,
        UpstreamsModule,
        PoliciesModule,
        PricesModule,
        BudgetsModule,
        RateLimitsModule,
        AuditFeatureModule,
        ReportsModule,
        CallsModule,
        TrailModule,
        AlertsModule,
        ToolsModule,
      ],
      providers: [
        AdminBearerStrategy,
        // Guards run in this order: authenticate, then check the org and the role, then the key's owner.
        { provide: APP_GUARD, useClass: AdminAuthGuard },
        { provide: APP_GUARD, useClass: OrgScopeGuard },
        { provide: APP_GUARD, useClass: KeyScopeGuard },
        { provide: APP_FILTER, useClass: AdminExceptionFilter },
        { provide: APP_PIPE, useClass: AdminValidationPipe },
      ],
    };
  }
}
