import { readFileSync } from 'node:fs';
import type { BaseEnv } from './config.schema';

export interface RedisHostPort {
  host: string;
  port: number;
}

/** Which Redis a deployment runs on: one server, a Redis Cluster, or a Sentinel-managed primary. */
export type RedisTopology =
  | { kind: 'standalone'; url: string }
  | { kind: 'cluster'; nodes: RedisHostPort[] }
  | { kind: 'sentinel'; sentinels: RedisHostPort[]; masterName: string; sentinelPassword?: string; db: number };

export interface RedisTls {
  ca?: string;
  cert?: string;
  key?: string;
}

export interface RedisConfig {
  /** REDIS_URL as given (the standalone server; for Sentinel, the redis+sentinel:// URL). */
  url: string;
  prefix: string;
  topology: RedisTopology;
  /** ACL user and password (managed services); for standalone they may come from the URL instead. */
  username?: string;
  password?: string;
  /** TLS to every node (and sentinel); `ca` is a PEM to trust besides the system's; `cert` and `key` a client certificate. */
  tls?: RedisTls;
  /** Opt-in: completions wait for this many replicas to acknowledge their writes (0: never wait). */
  completionWait: { replicas: number; timeoutMs: number };
}

/** A Redis setting that is wrong, with the variable that says so. */
export class RedisSettingsError extends Error {
  constructor(readonly issues: string[]) {
    super(issues.join('; '));
  }
}

const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** `host:port,host:port` (IPv6 as `[::1]:port`) from the variable `name`. */
export function parseHostPorts(name: string, value: string): RedisHostPort[] {
  const parts = value
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  if (parts.length === 0) throw new RedisSettingsError([`${name}: must list at least one host:port`]);
  return parts.map((part) => {
    const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(part);
    const port = m ? Number(m[2]) : NaN;
    if (!m || port < 1 || port > 65535) throw new RedisSettingsError([`${name}: "${part}" is not host:port`]);
    return { host: m[1].replace(/^\[|\]$/g, ''), port };
  });
}

/** `redis+sentinel://[user:pass@]host:port[,host:port...]/<master name>[/db]`. */
function parseSentinelUrl(url: string): {
  sentinels: RedisHostPort[];
  masterName: string;
  db: number;
  username?: string;
  password?: string;
  tls: boolean;
} {
  const m = /^(rediss?)\+sentinel:\/\/(?:([^:@/]*)(?::([^@/]*))?@)?([^/@]+)\/([^/?#]+)(?:\/(\d{1,2}))?\/?$/.exec(url);
  if (!m)
    throw new RedisSettingsError([
      'REDIS_URL: a Sentinel URL is redis+sentinel://[user:password@]host:port[,host:port...]/<master name>[/db]',
    ]);
  return {
    sentinels: parseHostPorts('REDIS_URL', m[4]),
    masterName: decodeURIComponent(m[5]),
    db: m[6] ? Number(m[6]) : 0,
    username: m[2] ? decodeURIComponent(m[2]) : undefined,
    password: m[3] ? decodeURIComponent(m[3]) : undefined,
    tls: m[1] === 'rediss',
  };
}

/** A PEM file's text, checked to hold what `variable` names; the error names the variable, never the content. */
function readPem(variable: string, what: string, marker: RegExp, file: string): string {
  try {
    const pem = readFileSync(file, 'utf8');
    if (!marker.test(pem)) throw new Error(`no PEM ${what} in it`);
    return pem;
  } catch (err) {
    throw new RedisSettingsError([`${variable}: cannot read a ${what} from ${file}: ${(err as Error).message}`]);
  }
}

/** TLS settings from REDIS_TLS_* (a client certificate needs its key, and the other way round). */
function tlsFrom(env: BaseEnv, on: boolean): RedisTls | undefined {
  if (Boolean(env.REDIS_TLS_CERT_FILE) !== Boolean(env.REDIS_TLS_KEY_FILE))
    throw new RedisSettingsError([
      env.REDIS_TLS_CERT_FILE
        ? 'REDIS_TLS_KEY_FILE: required with REDIS_TLS_CERT_FILE'
        : 'REDIS_TLS_CERT_FILE: required with REDIS_TLS_KEY_FILE',
    ]);
  const certificate = /-----BEGIN CERTIFICATE-----/;
  const tls: RedisTls = {
    ca: env.REDIS_TLS_CA_FILE && readPem('REDIS_TLS_CA_FILE', 'CA certificate', certificate, env.REDIS_TLS_CA_FILE),
    cert:
      env.REDIS_TLS_CERT_FILE &&
      readPem('REDIS_TLS_CERT_FILE', 'client certificate', certificate, env.REDIS_TLS_CERT_FILE),
    key:
      env.REDIS_TLS_KEY_FILE &&
      readPem('REDIS_TLS_KEY_FILE', 'private key', /-----BEGIN [A-Z ]*PRIVATE KEY-----/, env.REDIS_TLS_KEY_FILE),
  };
  // Any TLS file turns TLS on, as rediss:// or REDIS_TLS does.
  return on || tls.ca || tls.cert ? tls : undefined;
}

/** The Redis part of the configuration, checked once at boot; every error names its variable. */
export function redisConfigFrom(env: BaseEnv): RedisConfig {
  const sentinelUrl = /^rediss?\+sentinel:/.test(env.REDIS_URL);
  const urlGiven = env.REDIS_URL !== DEFAULT_REDIS_URL;
  const chosen = [
    env.REDIS_CLUSTER_NODES && 'REDIS_CLUSTER_NODES',
    env.REDIS_SENTINELS && 'REDIS_SENTINELS',
    urlGiven && 'REDIS_URL',
  ].filter(Boolean);
  if (chosen.length > 1) throw new RedisSettingsError([`${chosen.join(', ')}: set only one of them`]);
  if (env.REDIS_SENTINELS && !env.REDIS_SENTINEL_MASTER)
    throw new RedisSettingsError(['REDIS_SENTINEL_MASTER: required with REDIS_SENTINELS']);
  if (env.REDIS_SENTINEL_MASTER && !env.REDIS_SENTINELS)
    throw new RedisSettingsError(['REDIS_SENTINELS: required with REDIS_SENTINEL_MASTER']);

  let topology: RedisTopology;
  let username = env.REDIS_USERNAME;
  let password = env.REDIS_PASSWORD;
  let tls = env.REDIS_TLS ?? false;
  if (env.REDIS_CLUSTER_NODES) {
    topology = { kind: 'cluster', nodes: parseHostPorts('REDIS_CLUSTER_NODES', env.REDIS_CLUSTER_NODES) };
  } else if (env.REDIS_SENTINELS) {
    topology = {
      kind: 'sentinel',
      sentinels: parseHostPorts('REDIS_SENTINELS', env.REDIS_SENTINELS),
      masterName: env.REDIS_SENTINEL_MASTER!,
      sentinelPassword: env.REDIS_SENTINEL_PASSWORD,
      db: 0,
    };
  } else if (sentinelUrl) {
    const s = parseSentinelUrl(env.REDIS_URL);
    topology = {
      kind: 'sentinel',
      sentinels: s.sentinels,
      masterName: s.masterName,
      sentinelPassword: env.REDIS_SENTINEL_PASSWORD,
      db: s.db,
    };
    username ??= s.username;
    password ??= s.password;
    tls ||= s.tls;
  } else {
    let u: URL;
    try {
      u = new URL(env.REDIS_URL);
    } catch {
      throw new RedisSettingsError(['REDIS_URL: not a valid URL']);
    }
    if (u.pathname.length > 1 && !/^\/\d{1,2}$/.test(u.pathname))
      throw new RedisSettingsError(['REDIS_URL: the path may only be a database number (/0../15)']);
    topology = { kind: 'standalone', url: env.REDIS_URL };
    tls ||= u.protocol === 'rediss:';
  }
  return {
    url: env.REDIS_URL,
    prefix: env.REDIS_PREFIX,
    topology,
    username,
    password,
    tls: tlsFrom(env, tls),
    completionWait: { replicas: env.REDIS_COMPLETION_WAIT_REPLICAS, timeoutMs: env.REDIS_COMPLETION_WAIT_TIMEOUT_MS },
  };
}
