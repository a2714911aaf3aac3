import { describe, expect, it } from 'vitest';
import { ConfigException, loadEdgeConfig, loadWorkerConfig } from './tollgate-config';

const GOOD = {
  DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/tollgate',
  KEY_HASH_SECRET: 'x'.repeat(32),
  ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
};

describe('config', () => {
  it('should give a typed, structured config with defaults', () => {
    const c = loadEdgeConfig(GOOD);
    expect(c.redis).toEqual({
      url: 'redis://127.0.0.1:6379',
      prefix: 'tg',
      topology: { kind: 'standalone', url: 'redis://127.0.0.1:6379' },
      username: undefined,
      password: undefined,
      tls: undefined,
      completionWait: { replicas: 0, timeoutMs: 200 },
    });
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

  it('should wait 2 s before a failed catalog sync’s first retry unless SYNC_RETRY_DELAY_MS says, and refuse 0', () => {
    expect(loadWorkerConfig(GOOD).jobs.syncRetryDelayMs).toBe(2_000);
    expect(loadWorkerConfig({ ...GOOD, SYNC_RETRY_DELAY_MS: '250' }).jobs.syncRetryDelayMs).toBe(250);
    expect(() => loadWorkerConfig({ ...GOOD, SYNC_RETRY_DELAY_MS: '0' })).toThrow('SYNC_RETRY_DELAY_MS');
  });

  it('should wait 1 s before a failed alert delivery’s first retry unless ALERT_RETRY_DELAY_MS says, and refuse 0', () => {
    expect(loadWorkerConfig(GOOD).jobs.alertRetryDelayMs).toBe(1_000);
    expect(loadWorkerConfig({ ...GOOD, ALERT_RETRY_DELAY_MS: '100' }).jobs.alertRetryDelayMs).toBe(100);
    expect(() => loadWorkerConfig({ ...GOOD, ALERT_RETRY_DELAY_MS: '0' })).toThrow('ALERT_RETRY_DELAY_MS');
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

  describe('Redis', () => {
    const load = (vars: Record<string, string | undefined>) => loadEdgeConfig({ ...GOOD, ...vars }).redis;
    const failure = (vars: Record<string, string | undefined>) => {
      try {
        load(vars);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigException);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };

    it('should read a cluster from its seed nodes, with ACL credentials and TLS', () => {
      const r = load({
        REDIS_CLUSTER_NODES: 'redis-0.internal:6379, 10.0.0.2:6380,[::1]:7000',
        REDIS_USERNAME: 'tollgate',
        REDIS_PASSWORD: 'p@ss',
        REDIS_TLS: 'true',
      });
      expect(r.topology).toEqual({
        kind: 'cluster',
        nodes: [
          { host: 'redis-0.internal', port: 6379 },
          { host: '10.0.0.2', port: 6380 },
          { host: '::1', port: 7000 },
        ],
      });
      expect(r).toMatchObject({ username: 'tollgate', password: 'p@ss', tls: { ca: undefined } });
    });

    it('should read Sentinel from a redis+sentinel:// URL or from two variables', () => {
      expect(load({ REDIS_URL: 'redis+sentinel://u:s%40cret@s1:26379,s2:26380/mymaster/2' })).toMatchObject({
        topology: {
          kind: 'sentinel',
          sentinels: [
            { host: 's1', port: 26379 },
            { host: 's2', port: 26380 },
          ],
          masterName: 'mymaster',
          db: 2,
        },
        username: 'u',
        password: 's@cret',
      });
      expect(
        load({ REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_MASTER: 'primary', REDIS_SENTINEL_PASSWORD: 'sp' }).topology,
      ).toEqual({
        kind: 'sentinel',
        sentinels: [{ host: 's1', port: 26379 }],
        masterName: 'primary',
        sentinelPassword: 'sp',
        db: 0,
      });
    });

    it('should take TLS from rediss:// and a CA file, and name the file it cannot read', () => {
      expect(load({ REDIS_URL: 'rediss://cache:6380' }).tls).toEqual({ ca: undefined });
      expect(failure({ REDIS_TLS_CA_FILE: '/nonexistent/ca.pem' })).toContain('REDIS_TLS_CA_FILE');
    });

    it('should want a client certificate and its key together, and name the file it cannot read', () => {
      expect(failure({ REDIS_TLS_CERT_FILE: '/etc/hostname' })).toContain('REDIS_TLS_KEY_FILE: required with');
      expect(failure({ REDIS_TLS_KEY_FILE: '/etc/hostname' })).toContain('REDIS_TLS_CERT_FILE: required with');
      expect(failure({ REDIS_TLS_CERT_FILE: '/etc/hostname', REDIS_TLS_KEY_FILE: '/etc/hostname' })).toMatch(
        /REDIS_TLS_CERT_FILE: cannot read a client certificate from \/etc\/hostname: no PEM client certificate in it/,
      );
    });

    it('should name the variable of every bad or conflicting Redis setting', () => {
      expect(failure({ REDIS_CLUSTER_NODES: 'host-without-port' })).toMatch(/REDIS_CLUSTER_NODES: "host-without-port"/);
      expect(failure({ REDIS_CLUSTER_NODES: 'a:1', REDIS_URL: 'redis://b:6379' })).toMatch(
        /REDIS_CLUSTER_NODES, .*REDIS_URL/,
      );
      expect(failure({ REDIS_CLUSTER_NODES: 'a:1', REDIS_SENTINELS: 'b:2', REDIS_SENTINEL_MASTER: 'm' })).toContain(
        'set only one',
      );
      expect(failure({ REDIS_SENTINELS: 'b:2' })).toContain('REDIS_SENTINEL_MASTER');
      expect(failure({ REDIS_URL: 'redis+sentinel://s1:26379' })).toContain('REDIS_URL');
      expect(failure({ REDIS_URL: 'http://x' })).toContain('REDIS_URL');
      expect(failure({ REDIS_COMPLETION_WAIT_REPLICAS: '-1' })).toContain('REDIS_COMPLETION_WAIT_REPLICAS');
    });

    it('should refuse a braced prefix: tenant keys carry their own hash tag after it', () => {
      expect(failure({ REDIS_PREFIX: '{tg}' })).toMatch(/REDIS_PREFIX: .*no braces/);
    });
  });

  it('should derive the requestState key from REQUEST_STATE_SECRET, else from KEY_HASH_SECRET, the same on every edge', () => {
    const a = loadEdgeConfig(GOOD).edge.requestStateKey;
    expect(loadEdgeConfig(GOOD).edge.requestStateKey.equals(a)).toBe(true);
    expect(a.length).toBe(32);
    const own = loadEdgeConfig({ ...GOOD, REQUEST_STATE_SECRET: 'r'.repeat(32) }).edge.requestStateKey;
    expect(own.equals(a)).toBe(false);
    expect(() => loadEdgeConfig({ ...GOOD, REQUEST_STATE_SECRET: 'short' })).toThrow(/REQUEST_STATE_SECRET/);
  });
});
