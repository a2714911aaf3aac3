import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import { BaseConfig, TOLLGATE_CONFIG } from '@tollgate/config';
import { Pool } from 'pg';

/** The one database client of a process. Start-up fails if the database cannot be reached. */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleInit, OnApplicationShutdown {
  private readonly logger: Logger;
  /**
   * The connection pool under Prisma, for the few hot statements that must not pay Prisma's
   * per-query compilation (the ledger's batch INSERT): plain SQL, without a named prepared statement (PgBouncer transaction mode).
   */
  readonly pool: Pool;
  /**
   * Where spend reports read: a client on DATABASE_READ_URL (a replica, which may lag the primary
   * by its replication delay), or this client when that is unset.
   */
  readonly reports: PrismaClient;
  /** The pool under `reports`: DATABASE_READ_URL's, or `pool`. */
  readonly reportsPool: Pool;
  private readonly readPool: Pool | null;

  constructor(@Inject(TOLLGATE_CONFIG) config: BaseConfig) {
    const pool = new Pool({ connectionString: config.db.url, max: config.db.poolSize });
    super({ adapter: new PrismaPg(pool) });
    this.pool = pool;
    this.logger = new Logger(PrismaService.name);
    // An idle connection the server dropped is replaced on next use; it must not crash the process.
    pool.on('error', (err) => this.logger.warn(`idle database connection failed: ${err.message}`));
    this.readPool = config.db.readUrl
      ? new Pool({ connectionString: config.db.readUrl, max: config.db.poolSize })
      : null;
    this.readPool?.on('error', (err) => this.logger.warn(`idle read-replica connection failed: ${err.message}`));
    this.reports = this.readPool ? new PrismaClient({ adapter: new PrismaPg(this.readPool) }) : this;
    this.reportsPool = this.readPool ?? pool;
  }

  async onModuleInit(): Promise<void> {
    await this.$queryRaw`SELECT 1`;
    if (this.reports !== this) await this.reports.$queryRaw`SELECT 1`;
    this.logger.log(`database connected${this.reports !== this ? ' (reports on the read replica)' : ''}`);
  }

  /**
   * Last of all: BullMQ closes its workers at application shutdown too, waiting for the jobs in
   * flight, and those jobs still need the database (Nest runs the hooks of deeper modules first).
   */
  async onApplicationShutdown(): Promise<void> {
    await this.$disconnect();
    if (!this.pool.ended) await this.pool.end();
    if (this.reports !== this) await this.reports.$disconnect();
    if (this.readPool && !this.readPool.ended) await this.readPool.end();
  }
}
