import { startTelemetry } from '@tollgate/observability';

// Imported first by main.ts: the instrumentations patch http, undici, pg, ioredis and Prisma before they load.
// The edge opens its requests' server spans itself (inHttpServerSpan in edge-app.ts).
startTelemetry('tollgate-edge', process.env, { ownServerSpans: true });
