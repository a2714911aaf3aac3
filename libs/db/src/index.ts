export * from './prisma.service';
export * from './db.module';
export { Prisma } from '@prisma/client';
export type * from '@prisma/client';
export * from './tenant-scope';
export * from './ledger-spend';
