import { Prisma } from '@tollgate/db';
import { MaxRetriesPerRequestError } from 'ioredis/built/errors';
import { describe, expect, it } from 'vitest';
import { unavailableDependency } from '@tollgate/kernel';
import { mapError } from './error-mapping';

const known = (code: string, message = 'x') =>
  new Prisma.PrismaClientKnownRequestError(message, { code, clientVersion: '6.19.3' });

describe('unavailableDependency', () => {
  it.each(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028', 'P2037'])(
    'should call Prisma %s the database being down',
    (code) => {
      expect(unavailableDependency(known(code))).toBe('database');
    },
  );

  it('should call a Prisma error carrying a lost connection the database being down', () => {
    const err = known('P2010', 'Raw query failed');
    (err as unknown as { meta: unknown }).meta = {
      driverAdapterError: { name: 'DriverAdapterError', message: 'Connection terminated unexpectedly' },
    };
    expect(unavailableDependency(err)).toBe('database');
    expect(
      unavailableDependency(new Prisma.PrismaClientInitializationError("Can't reach database server", '6.19.3')),
    ).toBe('database');
  });

  it('should call a raw query refused for too many connections the database being down', () => {
    // As Prisma 6.19 with the pg adapter throws it ($queryRaw against a role at its connection limit).
    const err = known('P2010', 'Raw query failed. Code: `53300`');
    const cause = { originalCode: '53300', originalMessage: 'too many connections', kind: 'TooManyConnections' };
    (err as unknown as { meta: unknown }).meta = { driverAdapterError: { name: 'DriverAdapterError', cause } };
    expect(unavailableDependency(err)).toBe('database');
    const unique = { originalCode: '23505', originalMessage: 'duplicate key', kind: 'postgres' };
    (err as unknown as { meta: unknown }).meta = { driverAdapterError: { name: 'DriverAdapterError', cause: unique } };
    expect(unavailableDependency(err)).toBeNull();
  });

  it('should call pg errors of a server going away the database being down', () => {
    expect(
      unavailableDependency(
        Object.assign(new Error('terminating connection due to administrator command'), {
          severity: 'FATAL',
          code: '57P01',
        }),
      ),
    ).toBe('database');
    expect(unavailableDependency(new Error('Connection terminated unexpectedly'))).toBe('database');
  });

  it('should call ioredis giving up, or a closed connection, Redis being down', () => {
    expect(unavailableDependency(new MaxRetriesPerRequestError(3))).toBe('redis');
    expect(unavailableDependency(new Error('Connection is closed.'))).toBe('redis');
    expect(unavailableDependency(new Error("Stream isn't writeable and enableOfflineQueue options is false"))).toBe(
      'redis',
    );
  });

  it('should leave every other error alone', () => {
    expect(unavailableDependency(known('P2002', 'Unique constraint failed'))).toBeNull();
    expect(
      unavailableDependency(Object.assign(new Error('duplicate key'), { severity: 'ERROR', code: '23505' })),
    ).toBeNull();
    expect(unavailableDependency(new Error('boom'))).toBeNull();
    expect(
      unavailableDependency(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' })),
    ).toBeNull();
    expect(unavailableDependency(null)).toBeNull();
  });
});

describe('mapError for a dependency that is down', () => {
  it('should be a 503 naming the dependency with a retry time', () => {
    expect(mapError(known('P1001'))).toMatchObject({
      status: 503,
      code: 'DEPENDENCY_UNAVAILABLE',
      dependency: 'database',
      retryAfterSeconds: 5,
    });
    expect(mapError(new MaxRetriesPerRequestError(3))).toMatchObject({ status: 503, dependency: 'redis' });
    expect(mapError(new MaxRetriesPerRequestError(3)).unexpected).toBeUndefined();
  });
});
