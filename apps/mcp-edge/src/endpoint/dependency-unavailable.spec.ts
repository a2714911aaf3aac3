import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { rethrowAsProtocolError } from './dependency-unavailable';

/** The shape Prisma gives a query when the pg adapter cannot reach Postgres. */
function databaseUnreachable(): Error {
  return Object.assign(new Error("Can't reach database server"), {
    name: 'PrismaClientKnownRequestError',
    code: 'P1001',
    clientVersion: '6.19.3',
    meta: { driverAdapterError: { name: 'DriverAdapterError', cause: { kind: 'DatabaseNotReachable' } } },
  });
}

describe('rethrowAsProtocolError (an outage inside a message the SDK answers)', () => {
  it('should become a JSON-RPC error -32603 with the dependency and the retry hint', () => {
    let thrown: unknown;
    try {
      rethrowAsProtocolError(databaseUnreachable());
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(McpError);
    expect(thrown).toMatchObject({ code: -32603, data: { dependency: 'database', retryAfterSeconds: 5 } });
    expect((thrown as Error).message).toMatch(/Service unavailable: Tollgate cannot reach its database/);
    // The driver's own text does not reach the agent.
    expect((thrown as Error).message).not.toMatch(/reach database server/);
  });

  it('should rethrow any other error as it is', () => {
    const bug = new TypeError('x is undefined');
    expect(() => rethrowAsProtocolError(bug)).toThrow(bug);
    const redisDown = Object.assign(new Error('Reached the max retries per request limit (which is 3).'), {
      name: 'MaxRetriesPerRequestError',
    });
    expect(() => rethrowAsProtocolError(redisDown)).toThrow(
      expect.objectContaining({ data: { dependency: 'redis', retryAfterSeconds: 5 } }),
    );
  });
});
