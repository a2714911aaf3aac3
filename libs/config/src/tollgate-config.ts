import { createHmac } from 'node:crypto';
import { parseCidrList } from '@tollgate/outbound';
import { z } from 'zod';
import { ADMIN_ENV_SCHEMA, AdminEnv, BaseEnv, EDGE_ENV_SCHEMA, WORKER_ENV_SCHEMA } from './config.schema';
import { RedisConfig, redisConfigFrom, RedisSettingsError } from './redis-settings';

export interface EncryptionKey {
  id: string;
  key: Buffer;
}

/** What every process knows, as a structured object. */
export interface BaseConfig {
  /** `readUrl`: where spend reports read (a replica); the primary when unset. */
  db: { url: string; poolSize: number; readUrl: string | undefined };
  redis: RedisConfig;
  security: { keyHashSecret: string; encryptionKeys: EncryptionKey[] };
  tokens: { encoding: BaseEnv['TOKEN_ENCODING'] };
  log: { level: BaseEnv['LOG_LEVEL']; format: BaseEnv['LOG_FORMAT'] };
  /** SIGTERM: how long in-flight requests get before the process exits anyway. */
  shutdown: { deadlineMs: number };
  /** Retries of background jobs: the first wait after a failed catalog sync or alert delivery (then doubling). */
  jobs: { syncRetryDelayMs: number; alertRetryDelayMs: number };
  /** Ranges requests on a tenant's behalf may reach although the outbound rule refuses them. */
  outbound: { allowCidrs: string[] };
  /**
   * The OAuth authorization server (the admin API's public URL) and the one resource it issues
   * tokens for (the edge's `/mcp`); both unset where the process is not told them (OAuth off).
   */
  oauth: { issuer: string | undefined; resource: string | undefined };
}

export interface EdgeConfig extends BaseConfig {
  metrics: MetricsConfig;
  edge: {
    host: string;
    port: number;
    publicUrl: string | undefined;
    reservationTtlSeconds: number;
    /** The longest a task stays reserved and pollable before it expires. */
    taskTtlMaxMs: number;
    /** The `retry` (ms) of SSE answer streams' priming events. */
    sseRetryMs: number;
    admissionLeases: boolean;
    leaseIdleMs: number;
    defaultOutputTokenCap: number;
    allowedHosts: string[];
    adminPublicUrl: string | undefined;
    /** The HMAC key of input-required `requestState`s, the same on every edge of the deployment. */
    requestStateKey: Buffer;
    /** Share of governed calls written to the access log (0..1). */
    accessLogSample: number;
    /** Refused requests a key may send per window before it is answered 429 unread; 0: no throttle. */
    refusedInputAllowance: number;
  };
}

export interface AdminConfig extends BaseConfig {
  metrics: MetricsConfig;
  admin: {
    host: string;
    port: number;
    publicUrl: string | undefined;
    bootstrapToken: string | undefined;
    allowStdioForOrgAdmins: boolean;
    oauthAccessTokenTtlSeconds: number;
    oauthRefreshTokenTtlSeconds: number;
    /** Dynamic client registration's bounds. */
    oauthRegistration: { perSourcePerHour: number; unusedClientTtlSeconds: number; maxUnusedClients: number };
    /** Where the built console is (index.html and assets/); undefined: dist/console. */
    consoleDir: string | undefined;
    /** SSO cookie sessions: idle timeout (renewed on use) and absolute lifetime. */
    session: { idleSeconds: number; maxSeconds: number };
    /** The platform admins' own OIDC provider, when configured (all four variables). */
    platformSso: PlatformSsoConfig | undefined;
  };
}

export interface PlatformSsoConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Lower-cased; a verified email outside the list is refused. */
  adminEmails: string[];
}

export interface WorkerConfig extends BaseConfig {
  metrics: MetricsConfig;
  worker: {
    host: string;
    port: number;
    ledgerBatchSize: number;
    /** Batches of one outbox stream being written at once (1: read, write, acknowledge, then the next). */
    ledgerBatchesInFlight: number;
    /** Ledger partitions: months created ahead, months kept (0: all), archive table for dropped months. */
    ledgerPartitionsAhead: number;
    ledgerRetentionMonths: number;
    ledgerArchiveTable: string | undefined;
    ledgerClaimIdleMs: number;
    concurrency: number;
    redisCheckSeconds: number;
  };
  oauthRefresh: { withinSeconds: number; everySeconds: number };
  tierScores: {
    weights: { popularity: number; reliability: number; latency: number; recency: number };
    thresholds: { hot: number; warm: number; standard: number };
    windowDays: number;
    everySeconds: number;
  };
}

/** Who may read a process's /metrics: a bearer of `token`; nobody when it is unset. */
export interface MetricsConfig {
  token: string | undefined;
}

/** Thrown at boot with every bad variable named, so the process fails fast and says why. */
export class ConfigException extends Error {
  constructor(readonly issues: string[]) {
    super(`Invalid configuration:\n${issues.map((i) => `  - ${i}`).join('\n')}`);
    this.name = 'ConfigException';
  }
}

function parseEnv<S extends z.ZodTypeAny>(schema: S, env: Record<string, string | undefined>): z.infer<S> {
  // Empty strings count as unset so `FOO=` in a shell does not defeat a default.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    throw new ConfigException(result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`));
  }
  return result.data;
}

function parseEncryptionKeys(spec: string): EncryptionKey[] {
  return spec.split(',').map((part) => {
    const [id, b64] = part.split(':');
    const key = Buffer.from(b64, 'base64');
    if (key.length !== 32)
      throw new ConfigException([`ENCRYPTION_KEYS: key "${id}" must be 32 bytes (base64), got ${key.length}`]);
    return { id, key };
  });
}

function redisSettings(env: BaseEnv): RedisConfig {
  try {
    return redisConfigFrom(env);
  } catch (err) {
    if (err instanceof RedisSettingsError) throw new ConfigException(err.issues);
    throw err;
  }
}

const withoutTrailingSlash = (u: string | undefined) => u?.replace(/\/+$/, '');

function baseConfig(env: BaseEnv & { ADMIN_PUBLIC_URL?: string; EDGE_PUBLIC_URL?: string }): BaseConfig {
  const edgeUrl = withoutTrailingSlash(env.EDGE_PUBLIC_URL);
  return {
    db: { url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE, readUrl: env.DATABASE_READ_URL },
    redis: redisSettings(env),
    security: { keyHashSecret: env.KEY_HASH_SECRET, encryptionKeys: parseEncryptionKeys(env.ENCRYPTION_KEYS) },
    tokens: { encoding: env.TOKEN_ENCODING },
    log: { level: env.LOG_LEVEL, format: env.LOG_FORMAT },
    shutdown: { deadlineMs: env.SHUTDOWN_DEADLINE_SECONDS * 1000 },
    jobs: { syncRetryDelayMs: env.SYNC_RETRY_DELAY_MS, alertRetryDelayMs: env.ALERT_RETRY_DELAY_MS },
    outbound: { allowCidrs: parseCidrList(env.OUTBOUND_ALLOW_CIDRS) },
    oauth: { issuer: withoutTrailingSlash(env.ADMIN_PUBLIC_URL), resource: edgeUrl ? `${edgeUrl}/mcp` : undefined },
  };
}

export function loadEdgeConfig(env: Record<string, string | undefined>): EdgeConfig {
  const e = parseEnv(EDGE_ENV_SCHEMA, env);
  return {
    ...baseConfig(e),
    metrics: { token: e.METRICS_TOKEN },
    edge: {
      host: e.HOST,
      port: e.EDGE_PORT,
      publicUrl: e.EDGE_PUBLIC_URL,
      reservationTtlSeconds: e.RESERVATION_TTL_SECONDS,
      taskTtlMaxMs: e.TASK_TTL_MAX_MS,
      sseRetryMs: e.SSE_RETRY_MS,
      admissionLeases: e.EDGE_ADMISSION_LEASES,
      leaseIdleMs: e.EDGE_LEASE_IDLE_MS,
      defaultOutputTokenCap: e.DEFAULT_OUTPUT_TOKEN_CAP,
      allowedHosts: e.EDGE_ALLOWED_HOSTS.split(',')
        .map((h) => h.trim())
        .filter(Boolean),
      adminPublicUrl: e.ADMIN_PUBLIC_URL,
      // A key of its own (HMAC of the secret with a purpose label), never the secret itself.
      requestStateKey: createHmac('sha256', e.REQUEST_STATE_SECRET ?? e.KEY_HASH_SECRET)
        .update('tollgate:request-state:v1')
        .digest(),
      accessLogSample: e.EDGE_ACCESS_LOG_SAMPLE,
      refusedInputAllowance: e.EDGE_REFUSED_INPUT_ALLOWANCE,
    },
  };
}

export function loadAdminConfig(env: Record<string, string | undefined>): AdminConfig {
  const e = parseEnv(ADMIN_ENV_SCHEMA, env);
  return {
    ...baseConfig(e),
    metrics: { token: e.METRICS_TOKEN },
    admin: {
      host: e.HOST,
      port: e.ADMIN_PORT,
      publicUrl: e.ADMIN_PUBLIC_URL,
      bootstrapToken: e.ADMIN_BOOTSTRAP_TOKEN,
      allowStdioForOrgAdmins: e.ALLOW_STDIO_FOR_ORG_ADMINS,
      oauthAccessTokenTtlSeconds: e.OAUTH_ACCESS_TOKEN_TTL_SECONDS,
      oauthRefreshTokenTtlSeconds: e.OAUTH_REFRESH_TOKEN_TTL_SECONDS,
      oauthRegistration: {
        perSourcePerHour: e.OAUTH_REGISTRATIONS_PER_SOURCE_PER_HOUR,
        unusedClientTtlSeconds: e.OAUTH_UNUSED_CLIENT_TTL_SECONDS,
        maxUnusedClients: e.OAUTH_MAX_UNUSED_CLIENTS,
      },
      consoleDir: e.ADMIN_CONSOLE_DIR,
      session: {
        idleSeconds: e.ADMIN_SESSION_IDLE_SECONDS,
        maxSeconds: Math.max(e.ADMIN_SESSION_MAX_SECONDS, e.ADMIN_SESSION_IDLE_SECONDS),
      },
      platformSso: platformSso(e),
    },
  };
}

function platformSso(e: AdminEnv): PlatformSsoConfig | undefined {
  const vars = {
    PLATFORM_SSO_ISSUER: e.PLATFORM_SSO_ISSUER,
    PLATFORM_SSO_CLIENT_ID: e.PLATFORM_SSO_CLIENT_ID,
    PLATFORM_SSO_CLIENT_SECRET: e.PLATFORM_SSO_CLIENT_SECRET,
    PLATFORM_SSO_ADMIN_EMAILS: e.PLATFORM_SSO_ADMIN_EMAILS,
  };
  const missing = Object.entries(vars)
    .filter(([, v]) => !v)
    .map(([k]) => k);
  if (missing.length === 4) return undefined;
  if (missing.length > 0)
    throw new ConfigException(missing.map((k) => `${k}: required when any PLATFORM_SSO_* variable is set`));
  return {
    issuer: withoutTrailingSlash(vars.PLATFORM_SSO_ISSUER)!,
    clientId: vars.PLATFORM_SSO_CLIENT_ID!,
    clientSecret: vars.PLATFORM_SSO_CLIENT_SECRET!,
    adminEmails: vars
      .PLATFORM_SSO_ADMIN_EMAILS!.split(',')
      .map((m) => m.trim().toLowerCase())
      .filter(Boolean),
  };
}

export function loadWorkerConfig(env: Record<string, string | undefined>): WorkerConfig {
  const e = parseEnv(WORKER_ENV_SCHEMA, env);
  return {
    ...baseConfig(e),
    metrics: { token: e.METRICS_TOKEN },
    worker: {
      host: e.HOST,
      port: e.WORKER_PORT,
      ledgerBatchSize: e.LEDGER_BATCH_SIZE,
      ledgerBatchesInFlight: e.LEDGER_BATCHES_IN_FLIGHT,
      ledgerPartitionsAhead: e.LEDGER_PARTITIONS_AHEAD,
      ledgerRetentionMonths: e.LEDGER_RETENTION_MONTHS,
      ledgerArchiveTable: e.LEDGER_ARCHIVE_TABLE,
      ledgerClaimIdleMs: e.LEDGER_CLAIM_IDLE_MS,
      concurrency: e.WORKER_CONCURRENCY,
      redisCheckSeconds: e.WORKER_REDIS_CHECK_SECONDS,
    },
    oauthRefresh: { withinSeconds: e.OAUTH_REFRESH_WITHIN_SECONDS, everySeconds: e.OAUTH_REFRESH_EVERY_SECONDS },
    tierScores: {
      weights: {
        popularity: e.TIER_SCORE_WEIGHTS[0],
        reliability: e.TIER_SCORE_WEIGHTS[1],
        latency: e.TIER_SCORE_WEIGHTS[2],
        recency: e.TIER_SCORE_WEIGHTS[3],
      },
      thresholds: {
        hot: e.TIER_SCORE_THRESHOLDS[0],
        warm: e.TIER_SCORE_THRESHOLDS[1],
        standard: e.TIER_SCORE_THRESHOLDS[2],
      },
      windowDays: e.TIER_SCORE_WINDOW_DAYS,
      everySeconds: e.TIER_SCORE_EVERY_SECONDS,
    },
  };
}
