import { describe, expect, it } from 'vitest';
import { instrumentationsFromEnv } from './telemetry';

/** Named stand-ins for the instrumentations: which ones were made, in order. */
const ALL = Object.fromEntries(['http', 'undici', 'pg', 'ioredis', 'prisma'].map((n) => [n, () => n]));

describe('instrumentationsFromEnv', () => {
  it('should make every instrumentation when neither variable is set (or both are empty)', () => {
    expect(instrumentationsFromEnv({}, ALL)).toEqual(['http', 'undici', 'pg', 'ioredis', 'prisma']);
    expect(
      instrumentationsFromEnv(
        { OTEL_NODE_ENABLED_INSTRUMENTATIONS: ' ', OTEL_NODE_DISABLED_INSTRUMENTATIONS: '' },
        ALL,
      ),
    ).toEqual(['http', 'undici', 'pg', 'ioredis', 'prisma']);
  });

  it('should leave out the ones OTEL_NODE_DISABLED_INSTRUMENTATIONS names and keep only those OTEL_NODE_ENABLED_INSTRUMENTATIONS names', () => {
    expect(instrumentationsFromEnv({ OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'pg, ioredis' }, ALL)).toEqual([
      'http',
      'undici',
      'prisma',
    ]);
    expect(instrumentationsFromEnv({ OTEL_NODE_ENABLED_INSTRUMENTATIONS: 'undici,pg' }, ALL)).toEqual(['undici', 'pg']);
    // Both: the enabled ones less the disabled ones; an unknown name matches nothing.
    expect(
      instrumentationsFromEnv(
        { OTEL_NODE_ENABLED_INSTRUMENTATIONS: 'undici,pg,redis', OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'pg' },
        ALL,
      ),
    ).toEqual(['undici']);
  });
});
