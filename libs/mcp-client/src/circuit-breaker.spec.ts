import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from './circuit-breaker';
import { upstreamAnswerError } from './upstream-answer';
import { breakerOutcomeOf } from './upstream-client-pool.service';
import { UpstreamSessionExpiredError } from './upstream-session-expired.error';

describe('breakerOutcomeOf (what a failed call says about the upstream)', () => {
  it('should count failures of the upstream itself', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    for (const err of [
      refused,
      new StreamableHTTPError(503, 'down'),
      new StreamableHTTPError(-1, 'the upstream answered without a response to the call'),
      new McpError(ErrorCode.RequestTimeout, 'Request timed out'),
      new McpError(ErrorCode.ConnectionClosed, 'Connection closed'),
      new UpstreamSessionExpiredError(),
      new SyntaxError('Unexpected token < in JSON'),
      new TypeError('fetch failed', { cause: refused }),
    ]) {
      expect(breakerOutcomeOf(err)).toBe('failure');
    }
  });

  it('should not count an answer the upstream gave, whatever the caller sent it', () => {
    expect(breakerOutcomeOf(new McpError(ErrorCode.InvalidParams, 'bad arguments'))).toBe('answered');
    expect(breakerOutcomeOf(new McpError(ErrorCode.InternalError, 'tool crashed on this input'))).toBe('answered');
    expect(breakerOutcomeOf(new StreamableHTTPError(413, 'too large'))).toBe('answered');
    // The codes the SDK uses for its own timeouts and closed connections, answered by the upstream.
    expect(breakerOutcomeOf(upstreamAnswerError(ErrorCode.ConnectionClosed, 'backend refused'))).toBe('answered');
    expect(breakerOutcomeOf(upstreamAnswerError(ErrorCode.RequestTimeout, 'query took too long'))).toBe('answered');
  });

  it('should not count our own failures or a caller who hung up', () => {
    expect(breakerOutcomeOf(new RangeError('Maximum call stack size exceeded'))).toBe('not-the-upstream');
    expect(breakerOutcomeOf(new TypeError('Do not know how to serialize a BigInt'))).toBe('not-the-upstream');
    const hungUp = new AbortController();
    hungUp.abort();
    expect(breakerOutcomeOf(new McpError(ErrorCode.RequestTimeout, 'aborted'), hungUp.signal)).toBe('not-the-upstream');
  });
});

describe('CircuitBreaker', () => {
  it('should let another trial go when the half-open trial says nothing about the upstream', () => {
    const breaker = new CircuitBreaker(1, 1000);
    breaker.recordFailure(0);
    expect(breaker.blockedForMs(500)).toBe(500);
    expect(breaker.blockedForMs(1000)).toBe(0); // the trial
    expect(breaker.blockedForMs(1001)).toBe(1000);
    breaker.recordNeither();
    expect(breaker.blockedForMs(1002)).toBe(0);
  });
});
