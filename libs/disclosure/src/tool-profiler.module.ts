import { Global, Module } from '@nestjs/common';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { TOOL_PROFILER, ToolProfiler } from '@tollgate/upstream-registry';
import { profileTool } from './tool-profile';

/**
 * Binds the upstream registry's optional `TOOL_PROFILER` to `profileTool`, so a sync (worker) or an
 * approval that pins a new definition (admin API) stores the tool's summary, category and tier
 * token counts once per definition hash. Global, so the registry finds it without knowing this lib.
 */
@Global()
@Module({
  providers: [
    {
      provide: TOOL_PROFILER,
      inject: [TOLLGATE_CONFIG],
      useFactory: (config: BaseConfig): ToolProfiler => ({
        profile: (input) => profileTool(input, config.tokens.encoding),
      }),
    },
  ],
  exports: [TOOL_PROFILER],
})
export class ToolProfilerModule {}
