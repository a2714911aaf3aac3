import { parseCidrList } from '@tollgate/outbound';
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const url = z.string().url();
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
/** `n` comma-separated non-negative numbers, e.g. `0.4,0.3,0.2,0.1`. */
const numberList = (n: number, names: string) =>
  z
    .string()
    .transform((v) => v.split(',').map((x) => Number(x.trim())))
    .refine(
      (xs) => xs.length === n && xs.every((x) => Number.isFinite(x) && x >= 0),
      `must be ${n} non-negative numbers: ${names}`,
    );

// The bearer token that reads /metrics (they show spend); unset, /metrics is not served at all.
const metricsToken = z.string().min(24, 'must be at least 24 characters').optional();

/** Variables every process reads. */
export const BASE_ENV_SCHEMA = z.object({
  DATABASE_URL: url.refine((u) => /^postgres(ql)?:\/\//.test(u), 'must be a postgres:// URL'),
  // Connections this process keeps open to Postgres (or to a PgBouncer in front of it).
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(500).default(20),
  // A read replica (or its pooler) for spend reports; unset, reports read DATABASE_URL.
  DATABASE_READ_URL: url.refine((u) => /^postgres(ql)?:\/\//.test(u), 'must be a postgres:// URL').optional(),
  // Standalone Redis (`redis://`, `rediss://` for TLS) or Sentinel
  // (`redis+sentinel://[user:pass@]host:port[,host:port...]/<master name>[/db]`); see redis-settings.ts.
  REDIS_URL: z
    .string()
    .refine(
      (u) => /^(rediss?|rediss?\+sentinel):\/\//.test(u),
      'must be a redis://, rediss:// or redis+sentinel:// URL',
    )
    .default('redis://127.0.0.1:6379'),
  // Redis Cluster: comma-separated seed nodes `host:port,...` (instead of REDIS_URL).
  REDIS_CLUSTER_NODES: z.string().optional(),
  // Sentinel as two variables, the other way to say what a redis+sentinel:// REDIS_URL says.
  REDIS_SENTINELS: z.string().optional(),
  REDIS_SENTINEL_MASTER: z.string().min(1).max(200).optional(),
  REDIS_SENTINEL_PASSWORD: z.string().max(1000).optional(),
  // Credentials for managed Redis (ACL user and password); override the URL's own.
  REDIS_USERNAME: z.string().max(1000).optional(),
  REDIS_PASSWORD: z.string().max(1000).optional(),
  // TLS to every node (rediss:// says the same for a standalone URL); a PEM file of the CA to trust.
  REDIS_TLS: bool.optional(),
  REDIS_TLS_CA_FILE: z.string().min(1).max(1000).optional(),
  // A client certificate and its key (PEM files), for servers that require one (tls-auth-clients).
  REDIS_TLS_CERT_FILE: z.string().min(1).max(1000).optional(),
  REDIS_TLS_KEY_FILE: z.string().min(1).max(1000).optional(),
  // Opt-in: a completion waits until this many replicas have its writes (WAIT), at most the timeout.
  REDIS_COMPLETION_WAIT_REPLICAS: z.coerce.number().int().min(0).max(16).default(0),
  REDIS_COMPLETION_WAIT_TIMEOUT_MS: z.coerce.number().int().min(1).max(60_000).default(200),
  // Every Redis key and BullMQ queue of this deployment starts with it; tests use one per run. No
  // braces: tenant keys carry their own hash tag right after it (`<prefix>:{s<n>}:org:<id>:...`), and a
  // braced prefix would become every key's tag, putting the whole deployment in one cluster slot.
  REDIS_PREFIX: z
    .string()
    .regex(
      /^[A-Za-z0-9:_-]{1,64}$/,
      'must be 1-64 of A-Z a-z 0-9 : _ - (no braces: tenant keys carry their own hash tag)',
    )
    .default('tg'),
  // Pepper for virtual-key and admin-token hashes: a leaked database alone cannot test guesses.
  KEY_HASH_SECRET: z.string().min(16, 'must be at least 16 characters'),
  // Comma-separated `id:base64key` (32-byte keys); the first encrypts, all decrypt.
  ENCRYPTION_KEYS: z
    .string()
    .regex(
      /^[A-Za-z0-9_-]+:[A-Za-z0-9+/=]+(,[A-Za-z0-9_-]+:[A-Za-z0-9+/=]+)*$/,
      'must be id:base64key[,id:base64key...]',
    ),
  TOKEN_ENCODING: z.enum(['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base']).default('o200k_base'),
  LOG_LEVEL: z.enum(['error', 'warn', 'log', 'debug', 'verbose']).default('log'),
  // json: one JSON object a line (for collectors); text: coloured lines; auto: text on a terminal only.
  LOG_FORMAT: z.enum(['auto', 'json', 'text']).default('auto'),
  // On SIGTERM: readiness fails at once, then in-flight requests get this long before the process exits.
  SHUTDOWN_DEADLINE_SECONDS: z.coerce.number().int().min(1).max(3600).default(25),
  // A failed catalog sync is tried twice more, after this long and then twice this long.
  SYNC_RETRY_DELAY_MS: z.coerce.number().int().min(1).max(600_000).default(2_000),
  // A failed budget-alert delivery is tried 7 more times, after this long and then doubling (1 s:
  // about 4 minutes in all, for a webhook receiver that is down for a while).
  ALERT_RETRY_DELAY_MS: z.coerce.number().int().min(1).max(600_000).default(1_000),
  HOST: z.string().default('127.0.0.1'),
  // Comma-separated CIDRs that requests on a tenant's behalf may reach although the outbound rule
  // refuses them (loopback, private, link-local...); empty: only public addresses.
  OUTBOUND_ALLOW_CIDRS: z
    .string()
    .superRefine((v, ctx) => {
      try {
        parseCidrList(v);
      } catch (err) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: (err as Error).message });
      }
    })
    .default(''),
});

export const EDGE_ENV_SCHEMA = BASE_ENV_SCHEMA.extend({
  EDGE_PORT: port.default(4000),
  EDGE_PUBLIC_URL: url.optional(),
  // A reservation whose edge died is released after this long.
  RESERVATION_TTL_SECONDS: z.coerce.number().int().min(5).max(3600).default(120),
  // The longest a task (a tool call the upstream runs as a task) stays reserved and pollable:
  // an upstream's longer ttlMs is cut to this, and the task expires (cancelled, charged as failed).
  TASK_TTL_MAX_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .max(7 * 24 * 3_600_000)
    .default(3_600_000),
  // The `retry` of an SSE answer stream's priming event: how long a client whose stream broke waits
  // before it resumes it (with Last-Event-ID, on any edge).
  SSE_RETRY_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  // Edges lease blocks of budget and rate-limit allowance far from the limits and admit calls
  // against them without a round trip to Redis; 'false' checks every call in Redis.
  EDGE_ADMISSION_LEASES: bool.default('true'),
  // A lease no call has used for this long goes back to Redis.
  EDGE_LEASE_IDLE_MS: z.coerce.number().int().min(50).max(60_000).default(1000),
  // Output tokens reserved for a call whose tool and policy set no cap.
  DEFAULT_OUTPUT_TOKEN_CAP: z.coerce.number().int().min(1).default(8000),
  // Extra Host header values accepted besides localhost (DNS-rebinding protection).
  EDGE_ALLOWED_HOSTS: z.string().default(''),
  ADMIN_PUBLIC_URL: url.optional(),
  METRICS_TOKEN: metricsToken,
  // Signs the 2026-07-28 input-required `requestState`; the same on every edge so any edge can check
  // a retry. Unset: derived from KEY_HASH_SECRET (which every process of a deployment shares).
  REQUEST_STATE_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  // Share of governed calls logged as one access line each (method, tool, upstream, outcome, cost,
  // tokens, latency): 0 none, 1 every call.
  EDGE_ACCESS_LOG_SAMPLE: z.coerce.number().min(0).max(1).default(0),
  // Refused requests (bodies over the size, depth or value limits, bodies that do not parse) a key
  // may send per 10 s before its requests are answered 429 unread; 0 turns the throttle off.
  EDGE_REFUSED_INPUT_ALLOWANCE: z.coerce.number().int().min(0).max(1_000_000).default(10),
});

export const ADMIN_ENV_SCHEMA = BASE_ENV_SCHEMA.extend({
  ADMIN_PORT: port.default(4001),
  METRICS_TOKEN: metricsToken,
  ADMIN_PUBLIC_URL: url.optional(),
  // The first platform-admin token; more tokens are issued through the API.
  ADMIN_BOOTSTRAP_TOKEN: z.string().min(24, 'must be at least 24 characters').optional(),
  // Lets org admins register stdio upstreams (commands on Tollgate's hosts); off by default.
  ALLOW_STDIO_FOR_ORG_ADMINS: bool.default('false'),
  // The edge's public URL: the OAuth authorization server issues tokens for `<it>/mcp` only.
  EDGE_PUBLIC_URL: url.optional(),
  OAUTH_ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(3600),
  OAUTH_REFRESH_TOKEN_TTL_SECONDS: z.coerce.number().int().min(3600).max(31_536_000).default(2_592_000),
  // Dynamic client registration: per source address per hour, and how long a client nobody
  // authorised is kept; past OAUTH_MAX_UNUSED_CLIENTS unused clients, registration waits.
  OAUTH_REGISTRATIONS_PER_SOURCE_PER_HOUR: z.coerce.number().int().min(1).max(100_000).default(20),
  OAUTH_UNUSED_CLIENT_TTL_SECONDS: z.coerce.number().int().min(60).max(2_592_000).default(86_400),
  OAUTH_MAX_UNUSED_CLIENTS: z.coerce.number().int().min(1).max(10_000_000).default(10_000),
  // The built web console served at /console/ (default: dist/console beside the compiled app).
  ADMIN_CONSOLE_DIR: z.string().min(1).max(1000).optional(),
  // Admin API sessions (SSO cookie): ended after this long unused, and this long after sign-in at the latest.
  ADMIN_SESSION_IDLE_SECONDS: z.coerce.number().int().min(60).max(86_400).default(1800),
  ADMIN_SESSION_MAX_SECONDS: z.coerce.number().int().min(300).max(604_800).default(43_200),
  // Optional: platform admins sign in at this OIDC provider; only the listed verified emails get in.
  PLATFORM_SSO_ISSUER: url.optional(),
  PLATFORM_SSO_CLIENT_ID: z.string().max(500).optional(),
  PLATFORM_SSO_CLIENT_SECRET: z.string().max(2000).optional(),
  PLATFORM_SSO_ADMIN_EMAILS: z.string().optional(),
});

export const WORKER_ENV_SCHEMA = BASE_ENV_SCHEMA.extend({
  METRICS_TOKEN: metricsToken,
  WORKER_PORT: port.default(4002),
  // Events per ledger INSERT: the rollups add per group of a batch (key, tool, day), not per event, so
  // bigger batches cost less per event (see docs/architecture.md, "Capacity").
  LEDGER_BATCH_SIZE: z.coerce.number().int().min(1).max(20_000).default(5000),
  // Batches of one outbox stream written at once: the next batch is read and decoded while the last
  // is written, and written beside it (each acknowledged after its own commit). 1: one at a time.
  LEDGER_BATCHES_IN_FLIGHT: z.coerce.number().int().min(1).max(8).default(2),
  // Monthly ledger partitions the worker keeps created ahead of the current UTC month.
  LEDGER_PARTITIONS_AHEAD: z.coerce.number().int().min(1).max(24).default(3),
  // Whole UTC months of ledger rows kept before the current one; older months are dropped (their
  // totals kept as closing balances). 0 keeps everything; at least 4, so a quarter's budget is whole.
  LEDGER_RETENTION_MONTHS: z.coerce
    .number()
    .int()
    .refine((n) => n === 0 || (n >= 4 && n <= 1200), 'must be 0 (keep everything) or 4 to 1200')
    .default(0),
  // A table (created if missing) that receives a month's rows before retention drops them.
  LEDGER_ARCHIVE_TABLE: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, 'must be a table name (letters, digits, _)')
    .optional(),
  // Usage-outbox entries a worker read but has not written for this long are taken over by another.
  LEDGER_CLAIM_IDLE_MS: z.coerce.number().int().min(50).max(3_600_000).default(60_000),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  // How often the worker checks that Redis still holds its epoch and job schedulers (and on reconnect).
  WORKER_REDIS_CHECK_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
  // Per-user OAuth tokens expiring within this many seconds are refreshed ahead of time.
  OAUTH_REFRESH_WITHIN_SECONDS: z.coerce.number().int().min(60).max(86_400).default(600),
  OAUTH_REFRESH_EVERY_SECONDS: z.coerce.number().int().min(10).max(3600).default(60),
  // Tier scores: shares of popularity, reliability, latency and recency; lowest score of HOT, WARM, STANDARD.
  TIER_SCORE_WEIGHTS: numberList(4, 'popularity,reliability,latency,recency').default('0.4,0.3,0.2,0.1'),
  TIER_SCORE_THRESHOLDS: numberList(3, 'hot,warm,standard')
    .refine(([hot, warm, standard]) => hot >= warm && warm >= standard, 'must be descending: hot,warm,standard')
    .default('0.6,0.4,0.15'),
  TIER_SCORE_WINDOW_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  TIER_SCORE_EVERY_SECONDS: z.coerce.number().int().min(10).max(86_400).default(600),
});

export type BaseEnv = z.infer<typeof BASE_ENV_SCHEMA>;
export type EdgeEnv = z.infer<typeof EDGE_ENV_SCHEMA>;
export type AdminEnv = z.infer<typeof ADMIN_ENV_SCHEMA>;
export type WorkerEnv = z.infer<typeof WORKER_ENV_SCHEMA>;
