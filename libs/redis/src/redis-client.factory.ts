import type { RedisConfig, RedisTopology } from '@tollgate/config';
import type { ConnectionOptions } from 'bullmq';
import { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { EndingCluster } from './ending-cluster';

/** What every Redis client of a process is: one server (standalone or Sentinel's primary) or a cluster. */
export type RedisClient = Redis | Cluster;

/** Per-client options (retries, offline queue, auto-pipelining) on top of the deployment's settings. */
export type RedisClientOptions = Pick<
  RedisOptions,
  | 'maxRetriesPerRequest'
  | 'enableOfflineQueue'
  | 'enableAutoPipelining'
  | 'lazyConnect'
  | 'retryStrategy'
  | 'connectTimeout'
  | 'autoResendUnfulfilledCommands'
  | 'connectionName'
  | 'autoResubscribe'
>;

/** Connection options every node (and, for Sentinel, the primary it names) is opened with. */
function nodeOptions(config: RedisConfig): RedisOptions {
  return {
    username: config.username,
    password: config.password,
    tls: config.tls ? { ...config.tls } : undefined,
  };
}

/** The primary a set of Sentinels names (ioredis asks them, and again after a failover). */
function sentinelOptions(config: RedisConfig, topology: Extract<RedisTopology, { kind: 'sentinel' }>): RedisOptions {
  return {
    ...nodeOptions(config),
    sentinels: topology.sentinels,
    name: topology.masterName,
    db: topology.db,
    sentinelPassword: topology.sentinelPassword,
    enableTLSForSentinelMode: Boolean(config.tls),
    sentinelTLS: config.tls ? { ...config.tls } : undefined,
  };
}

/**
 * The one way a process opens Redis, from the deployment's configuration: a `Redis` for a
 * standalone server or a Sentinel-managed primary, a `Cluster` for Redis Cluster. RedisService,
 * BullMQ, tests and benches all build theirs here, so a setting (TLS, ACL user) cannot be
 * honoured by one client and forgotten by another.
 */
export function createRedisClient(config: RedisConfig, options: RedisClientOptions = {}): RedisClient {
  const topology = config.topology;
  switch (topology.kind) {
    case 'standalone': {
      // The URL carries host, port, db and perhaps credentials; explicit settings win over it.
      const own = nodeOptions(config);
      return new Redis(topology.url, {
        ...options,
        ...(own.username ? { username: own.username } : {}),
        ...(own.password ? { password: own.password } : {}),
        ...(own.tls ? { tls: own.tls } : {}),
      });
    }
    case 'sentinel':
      return new Redis({ ...options, ...sentinelOptions(config, topology) });
    case 'cluster': {
      // enableAutoPipelining is left out: off on a cluster (below).
      // eslint-disable-next-line @typescript-eslint/no-unused-vars
      const { maxRetriesPerRequest, enableOfflineQueue, enableAutoPipelining, lazyConnect, retryStrategy, ...rest } =
        options;
      const clusterOptions: ClusterOptions = {
        redisOptions: { ...rest, ...nodeOptions(config), maxRetriesPerRequest },
        enableOfflineQueue,
        // Off on a cluster: an auto-pipeline holds commands of several slots of one node, and
        // after a planned failover (the old master stays up, answering MOVED for each slot) ioredis
        // retries a pipeline only when every reply is the same error, so each command failed with
        // a raw MOVED until the next slot refresh (found by the money model's failover command).
        enableAutoPipelining: false,
        lazyConnect,
        clusterRetryStrategy: retryStrategy ?? undefined,
        // Managed services (ElastiCache, Memorystore) announce nodes by names that match their
        // TLS certificates; the seed list is only where discovery starts.
        dnsLookup: (address, callback) => callback(null, address),
        // A failover moves slots: follow MOVED at once and refresh the map in the background.
        retryDelayOnMoved: 0,
        retryDelayOnFailover: 100,
        retryDelayOnClusterDown: 100,
        slotsRefreshTimeout: 2000,
      };
      return new EndingCluster(topology.nodes, clusterOptions);
    }
  }
}

/**
 * BullMQ's connection: options for one server (BullMQ opens and closes its own sockets), and for
 * a cluster a `Cluster` built here (BullMQ cannot build one from options) that the caller closes
 * after BullMQ has closed its queues and workers.
 */
export function bullConnection(config: RedisConfig, options: { enableOfflineQueue?: boolean } = {}): ConnectionOptions {
  const topology = config.topology;
  if (topology.kind === 'cluster') {
    return createRedisClient(config, { ...options, maxRetriesPerRequest: null }) as Cluster;
  }
  if (topology.kind === 'sentinel') {
    // ioredis' own option types are wider than BullMQ's copy of them (retryStrategy's signature).
    return { ...sentinelOptions(config, topology), maxRetriesPerRequest: null, ...options } as ConnectionOptions;
  }
  const u = new URL(topology.url);
  const own = nodeOptions(config);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    username: own.username ?? (u.username ? decodeURIComponent(u.username) : undefined),
    password: own.password ?? (u.password ? decodeURIComponent(u.password) : undefined),
    db: u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0,
    tls: own.tls,
    maxRetriesPerRequest: null,
    ...options,
  };
}

/** A second connection like `client` (a subscriber, a blocking reader), with these options on top. */
export function duplicateRedisClient(client: RedisClient, options: RedisClientOptions = {}): RedisClient {
  return client instanceof Cluster ? client.duplicate([], options) : client.duplicate(options);
}

/**
 * The servers a SCAN must visit: every master of a cluster (once the client has its slot map: a
 * new `Cluster` knows no nodes yet), or the one server.
 */
export async function scanTargets(client: RedisClient): Promise<Redis[]> {
  if (!(client instanceof Cluster)) return [client];
  if (client.status !== 'ready') await new Promise<void>((resolve) => client.once('ready', () => resolve()));
  return client.nodes('master');
}
