import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';

/** The one database client of a process. Start-up fails if the database cannot be reached. */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(PrismaService.name);

  constructor(@Inject(TOLLGATE_CONFIG) config: BaseConfig) {
    super({ adapter: new PrismaPg({ connectionString: config.db.url, max: 20 }) });
  }

  async onModuleInit(): Promise<void> {
    await this.$queryRaw`SELECT 1`;
    this.logger.log('database connected');
  }

  /**
   * Last of all: BullMQ closes its workers at application shutdown too, waiting for the jobs in
   * flight, and those jobs still need the database (Nest runs the hooks of deeper modules first).
   */
  async onApplicationShutdown(): Promise<void> {
    await this.$disconnect();
  }
}
