import { startTelemetry } from '@tollgate/observability';

// Imported first by main.ts: the instrumentations patch http, undici, pg, ioredis and Prisma before they load.
startTelemetry('tollgate-worker', process.env);
