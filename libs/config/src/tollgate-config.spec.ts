import { describe, expect, it } from 'vitest';
import { ConfigException, loadEdgeConfig } from './tollgate-config';

const GOOD = {
  DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/tollgate',
  KEY_HASH_SECRET: 'x'.repeat(32),
  ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
};

describe('config', () => {
  it('should give a typed, structured config with defaults', () => {
    const c = loadEdgeConfig(GOOD);
    expect(c.redis).toEqual({ url: 'redis://127.0.0.1:6379', prefix: 'tg' });
    expect(c.edge.port).toBe(4000);
    expect(c.security.encryptionKeys[0].key.length).toBe(32);
  });

  it('should fail fast naming every bad variable', () => {
    try {
      loadEdgeConfig({ ...GOOD, DATABASE_URL: 'mysql://x', EDGE_PORT: 'ninety', KEY_HASH_SECRET: undefined });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigException);
      const msg = (err as Error).message;
      expect(msg).toContain('DATABASE_URL');
      expect(msg).toContain('EDGE_PORT');
      expect(msg).toContain('KEY_HASH_SECRET');
    }
  });

  it('should reject an encryption key that is not 32 bytes', () => {
    expect(() => loadEdgeConfig({ ...GOOD, ENCRYPTION_KEYS: `k1:${Buffer.alloc(16).toString('base64')}` })).toThrow(
      /32 bytes/,
    );
  });

  it('should treat an empty variable as unset', () => {
    expect(loadEdgeConfig({ ...GOOD, REDIS_PREFIX: '' }).redis.prefix).toBe('tg');
  });

  it('should allow no refused outbound range unless OUTBOUND_ALLOW_CIDRS lists it, and name a bad entry at boot', () => {
    expect(loadEdgeConfig(GOOD).outbound.allowCidrs).toEqual([]);
    expect(loadEdgeConfig({ ...GOOD, OUTBOUND_ALLOW_CIDRS: '10.20.0.0/16, fd00:1::/64' }).outbound.allowCidrs).toEqual([
      '10.20.0.0/16',
      'fd00:1::/64',
    ]);
    expect(() => loadEdgeConfig({ ...GOOD, OUTBOUND_ALLOW_CIDRS: '10.20.0.0/16,intranet' })).toThrow(
      /OUTBOUND_ALLOW_CIDRS: "intranet" is not a CIDR/,
    );
  });
});
