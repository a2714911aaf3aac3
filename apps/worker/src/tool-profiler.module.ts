import { Global, Module } from '@nestjs/common';
import { TOOL_PROFILER, ToolProfiler } from '@tollgate/catalog';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { profileTool } from '@tollgate/disclosure';

/**
 * Binds the catalog's optional `TOOL_PROFILER` to progressive disclosure's `profileTool`, so a
 * sync stores each tool's summary, category and tier token counts once per definition hash.
 * Global, so the catalog finds it without knowing the disclosure lib.
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
