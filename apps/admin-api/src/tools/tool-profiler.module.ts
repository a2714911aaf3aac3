import { Global, Module } from '@nestjs/common';
import { TOOL_PROFILER, ToolProfiler } from '@tollgate/catalog';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { profileTool } from '@tollgate/disclosure';

/**
 * Binds the catalog's optional `TOOL_PROFILER` to progressive disclosure's `profileTool`, so an
 * approval that pins a new definition stores its summary and tier token counts at once (the
 * worker binds the same for syncs). Global, so the catalog finds it without knowing the lib.
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
