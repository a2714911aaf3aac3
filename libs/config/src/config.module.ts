import { DynamicModule, Global, Module } from '@nestjs/common';
import { installOutboundAllowList } from '@tollgate/outbound';
import { BaseConfig } from './tollgate-config';

/** Injection token for the process's config object (a BaseConfig or an app's extension of it). */
export const TOLLGATE_CONFIG = Symbol('TOLLGATE_CONFIG');

/** Holds the config loaded once at boot; libs inject `TOLLGATE_CONFIG` typed as `BaseConfig`. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: BaseConfig): DynamicModule {
    // Every outbound request this process makes on a tenant's behalf follows the operator's allow list.
    installOutboundAllowList(config.outbound.allowCidrs);
    return {
      module: ConfigModule,
      providers: [{ provide: TOLLGATE_CONFIG, useValue: config }],
      exports: [TOLLGATE_CONFIG],
    };
  }
}
