import { Controller, Get, HttpStatus, Logger, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { PrismaService } from '@tollgate/db';
import { RedisService } from '@tollgate/redis';
import type { Response } from 'express';
import { Public } from '../auth/public.decorator';
import { DEPENDENCY_RETRY_AFTER_SECONDS } from '@tollgate/kernel';

const CHECK_TIMEOUT_MS = 2000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

@ApiTags('health')
@Public()
@Controller()
export class HealthController {
  private readonly logger = new Logger(HealthController.name);

  constructor(
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
  ) {}

  @Get('healthz')
  @ApiOperation({ summary: 'Liveness: the process answers' })
  @ApiOkResponse({ schema: { example: { status: 'ok' } } })
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('readyz')
  @ApiOperation({ summary: 'Readiness: Postgres and Redis answer' })
  @ApiOkResponse({ schema: { example: { status: 'ok', checks: { db: 'ok', redis: 'ok' } } } })
  @ApiServiceUnavailableResponse({
    schema: { example: { status: 'unavailable', checks: { db: 'ok', redis: 'failed' } } },
  })
  async readyz(
    @Res({ passthrough: true }) res: Response,
  ): Promise<{ status: string; checks: Record<string, 'ok' | 'failed'> }> {
    const [db, redis] = await Promise.allSettled([
      withTimeout(this.prisma.$queryRaw`SELECT 1`, CHECK_TIMEOUT_MS),
      withTimeout(this.redis.ping(), CHECK_TIMEOUT_MS).then((ok) => {
        if (!ok) throw new Error('unexpected PING answer');
      }),
    ]);
    const checks = {
      db: db.status === 'fulfilled' ? 'ok' : 'failed',
      redis: redis.status === 'fulfilled' ? 'ok' : 'failed',
    } as const;
    for (const [name, r] of [
      ['db', db],
      ['redis', redis],
    ] as const) {
      if (r.status === 'rejected')
        this.logger.warn(
          `readiness check ${name} failed: ${r.reason instanceof Error ? r.reason.message : String(r.reason)}`,
        );
    }
    const ready = checks.db === 'ok' && checks.redis === 'ok';
    res.status(ready ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE);
    if (!ready) res.setHeader('Retry-After', String(DEPENDENCY_RETRY_AFTER_SECONDS));
    return { status: ready ? 'ok' : 'unavailable', checks };
  }
}
