import { DynamicModule, Global, Module } from '@nestjs/common';
import { BaseConfig } from './tollgate-config';

/** Injection token for the process's config object (a BaseConfig or an app's extension of it). */
export const TOLLGATE_CONFIG = Symbol('TOLLGATE_CONFIG');

/** Holds the config loaded once at boot; libs inject `TOLLGATE_CONFIG` typed as `BaseConfig`. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: BaseConfig): DynamicModule {
    return { module: ConfigModule, providers: [{ provide: TOLLGATE_CONFIG, useValue: config }], exports: [TOLLGATE_CONFIG] };
  }
}
