import { DynamicModule, Global, Module } from '@nestjs/common';
import { CLOCK, Clock, systemClock } from '@tollgate/kernel';
import { installOutboundAllowList } from '@tollgate/outbound';
import { BaseConfig } from './tollgate-config';

/** Injection token for the process's config object (a BaseConfig or an app's extension of it). */
export const TOLLGATE_CONFIG = Symbol('TOLLGATE_CONFIG');

/**
 * Holds the config loaded once at boot; libs inject `TOLLGATE_CONFIG` typed as `BaseConfig`, and
 * the process's `CLOCK` (the system clock unless a test passes its own).
 */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: BaseConfig, clock: Clock = systemClock): DynamicModule {
    // Every outbound request this process makes on a tenant's behalf follows the operator's allow list.
    installOutboundAllowList(config.outbound.allowCidrs);
    return {
      module: ConfigModule,
      providers: [
        { provide: TOLLGATE_CONFIG, useValue: config },
        { provide: CLOCK, useValue: clock },
      ],
      exports: [TOLLGATE_CONFIG, CLOCK],
    };
  }
}
