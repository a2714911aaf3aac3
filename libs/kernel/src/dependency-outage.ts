// Shared by the edge and the admin API (first written for the admin API's 503s).
/** A store Tollgate's processes cannot serve without. */
export type UnavailableDependency = 'database' | 'redis';

/** Seconds a client is told to wait before retrying when a dependency is down. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 5;

// Prisma's codes for "the database could not be reached or went away": P1001 unreachable, P1002
// timed out reaching it, P1008 operation timed out, P1017 server closed the connection, P2024 no
// pooled connection in time, P2028 a transaction could not start, P2037 too many connections.
const PRISMA_UNAVAILABLE = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028', 'P2037']);
// Postgres SQLSTATEs: class 08 connection exceptions, 57P01-03 shutting down or starting, 53300 too many connections.
const PG_UNAVAILABLE = /^(08\d{3}|57P0[1-3]|53300)$/;
const NET_UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
// The pg driver adapter's error kinds (Prisma's `driverAdapterError.cause.kind`) for the same.
const ADAPTER_UNAVAILABLE = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
]);
const CONNECTION_LOST =
  /Connection terminated|Connection is closed|connection (?:was )?closed|Can't reach database server|Server has closed the connection/i;
// ioredis: a command that gave up after its retries, or one sent on a closed or unwritable connection.
const REDIS_UNAVAILABLE =
  /^(Reached the max retries per request limit|Connection is closed\.|Stream isn't writeable|None of the (?:sentinels|nodes) are available)|^(?:LOADING|MASTERDOWN|CLUSTERDOWN|TRYAGAIN) /;

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  /** The driver adapter's error (`driverAdapterError.cause`): the SQLSTATE and its kind. */
  originalCode?: unknown;
  kind?: unknown;
  meta?: { driverAdapterError?: unknown };
  clientVersion?: unknown;
}

function isPrismaError(err: ErrorLike): boolean {
  return typeof err.name === 'string' && err.name.startsWith('PrismaClient') && typeof err.clientVersion === 'string';
}

/** The errors an error was made from (`cause`, Prisma's driver adapter error), a few levels deep. */
function chainOf(err: unknown): ErrorLike[] {
  const chain: ErrorLike[] = [];
  const queue: unknown[] = [err];
  while (queue.length > 0 && chain.length < 8) {
    const e = queue.shift();
    if (typeof e !== 'object' || e === null || chain.includes(e as ErrorLike)) continue;
    const like = e as ErrorLike;
    chain.push(like);
    queue.push(like.cause, like.meta?.driverAdapterError);
  }
  return chain;
}

/**
 * Which dependency an error says is down, or null when it says something else (a constraint, a bad
 * query: those stay what they are). Prisma's errors (and the pg adapter's, which it wraps) are the
 * database; ioredis's connection errors are Redis.
 */
export function unavailableDependency(err: unknown): UnavailableDependency | null {
  const chain = chainOf(err);
  if (chain.length === 0) return null;
  const fromPrisma = chain.some(isPrismaError);
  for (const e of chain) {
    const code = typeof e.code === 'string' ? e.code : '';
    const message = typeof e.message === 'string' ? e.message : '';
    const name = typeof e.name === 'string' ? e.name : '';
    if (fromPrisma) {
      if (name === 'PrismaClientInitializationError' || PRISMA_UNAVAILABLE.has(code)) return 'database';
      if (PG_UNAVAILABLE.test(code) || NET_UNAVAILABLE.has(code) || CONNECTION_LOST.test(message)) return 'database';
      // A raw query's error (P2010) says it only here: `{ originalCode: '53300', kind: 'TooManyConnections' }`.
      const sqlState = typeof e.originalCode === 'string' ? e.originalCode : '';
      if (PG_UNAVAILABLE.test(sqlState) || (typeof e.kind === 'string' && ADAPTER_UNAVAILABLE.has(e.kind)))
        return 'database';
      continue;
    }
    // pg's own errors, should one reach us unwrapped: a SQLSTATE with a severity, or its lost-connection message.
    if (
      (typeof (e as { severity?: unknown }).severity === 'string' && PG_UNAVAILABLE.test(code)) ||
      message.startsWith('Connection terminated')
    )
      return 'database';
    if (name === 'MaxRetriesPerRequestError' || REDIS_UNAVAILABLE.test(message)) return 'redis';
  }
  return null;
}
