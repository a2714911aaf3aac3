// A real Redis Cluster on loopback for the test suite and the benches: six redis-server processes
// in cluster mode (three masters, three replicas) in a temporary directory, joined with
// `redis-cli --cluster create`. The node timeout is low so a killed master's replica takes over
// within about two seconds (failover tests and `BENCH_REDIS=cluster`).
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface LocalRedisClusterNode {
  port: number;
  pid: number;
}

export interface LocalRedisCluster {
  /** `127.0.0.1:port,...`: the value of REDIS_CLUSTER_NODES. */
  seeds: string;
  nodes: LocalRedisClusterNode[];
  /** The ports of the nodes that are masters now (after a failover, the promoted replicas). */
  masterPorts(): Promise<number[]>;
  /** The port of the master that serves a key now. */
  masterPortOf(key: string): Promise<number>;
  /** kill -9 one master and wait until its replica is promoted and the cluster is ok again. */
  killMasterAndAwaitFailover(port: number, timeoutMs?: number): Promise<{ promotedPort: number; tookMs: number }>;
  /**
   * A planned failover (CLUSTER FAILOVER on the master's replica, as managed Redis does for
   * maintenance): the replica catches up with its master before taking over, so nothing
   * acknowledged is lost. Resolves once the cluster is ok with the replica as master.
   */
  plannedFailover(masterPort: number, timeoutMs?: number): Promise<{ promotedPort: number }>;
  /**
   * kill -9 of a master once its replica holds every write it acknowledged (replication offsets
   * equal), so the failover loses nothing; then a new redis-server on its port and files, which
   * rejoins as the promoted replica's replica. Resolves once that one is in sync.
   */
  killCaughtUpMaster(masterPort: number, timeoutMs?: number): Promise<{ promotedPort: number }>;
  /** kill -9 of a replica and a new redis-server on its port and files; resolves once it is in sync again. */
  restartReplica(port: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface LocalRedisClusterOptions {
  /** Milliseconds before a silent master is failed over (cluster-node-timeout). */
  nodeTimeoutMs?: number;
  /** appendonly yes (everysec) on every node; off by default (the suite needs no persistence). */
  appendOnly?: boolean;
  log?: (line: string) => void;
}

/** A free port P whose cluster bus port P+10000 is free too. */
export async function freeClusterPort(taken: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 25_000);
    if (taken.has(port) || taken.has(port + 10_000)) continue;
    if ((await portIsFree(port)) && (await portIsFree(port + 10_000))) {
      taken.add(port);
      taken.add(port + 10_000);
      return port;
    }
  }
  throw new Error('no free port pair for a Redis Cluster node');
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 10_000 });
  return stdout;
}

async function clusterInfo(port: number): Promise<Record<string, string>> {
  const out = await cli(port, 'cluster', 'info').catch(() => '');
  return Object.fromEntries(
    out
      .split(/\r?\n/)
      .filter((l) => l.includes(':'))
      .map((l) => l.split(':').map((s) => s.trim()) as [string, string]),
  );
}

/** `CLUSTER NODES` as seen from one node: port, role, whether it is failed, its master's id. */
async function clusterNodes(port: number) {
  const out = await cli(port, 'cluster', 'nodes');
  return out
    .split(/\r?\n/)
    .filter(Boolean)
    .map((line) => {
      const [id, addr, flags, masterId, , , , , ...slots] = line.split(' ');
      return {
        id,
        port: Number(addr.split('@')[0].split(':')[1]),
        master: flags.includes('master'),
        failed: flags.includes('fail'),
        masterId,
        // `0-5460` or `5461`; migrating-slot entries (`[...]`) do not occur here.
        slots: slots
          .filter((r) => /^\d+(-\d+)?$/.test(r))
          .map((r) => r.split('-').map(Number))
          .map(([from, to]) => [from, to ?? from] as [number, number]),
      };
    });
}

type ClusterNode = Awaited<ReturnType<typeof clusterNodes>>[number];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Redis Cluster: ${what} not reached within ${timeoutMs} ms`);
    await sleep(50);
  }
}

export async function startLocalRedisCluster(options: LocalRedisClusterOptions = {}): Promise<LocalRedisCluster> {
  const log = options.log ?? (() => undefined);
  const dir = mkdtempSync(path.join(tmpdir(), 'tollgate-redis-cluster-'));
  const taken = new Set<number>();
  const children = new Map<number, ChildProcess>();
  const killAll = () => {
    for (const child of children.values()) if (child.exitCode === null) child.kill('SIGKILL');
  };
  process.once('exit', killAll);

  const stop = async () => {
    process.removeListener('exit', killAll);
    await Promise.all(
      [...children.values()].map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };

  const startNode = (port: number) => {
    const nodeDir = path.join(dir, String(port));
    mkdirSync(nodeDir, { recursive: true });
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      nodeDir,
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      'nodes.conf',
      '--cluster-node-timeout',
      String(options.nodeTimeoutMs ?? 1000),
      // A replica always takes over, however long it was out of touch (tests kill masters).
      '--cluster-replica-validity-factor',
      '0',
      '--save',
      '',
      '--appendonly',
      options.appendOnly ? 'yes' : 'no',
      '--daemonize',
      'no',
    ];
    const child = spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr?.on('data', (chunk: Buffer) => log(`[redis ${port}] ${chunk.toString().trim()}`));
    children.set(port, child);
  };

  try {
    const ports: number[] = [];
    for (let i = 0; i < 6; i++) ports.push(await freeClusterPort(taken));
    for (const port of ports) startNode(port);
    for (const port of ports) {
      await until(`node ${port} answering`, 10_000, async () =>
        (await cli(port, 'ping').catch(() => '')).includes('PONG'),
      );
    }
    await run(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes'],
      { timeout: 30_000 },
    );
    // Every node sees the whole cluster ok, and every replica is in sync with its master.
    await until('cluster_state:ok on every node', 30_000, async () => {
      const infos = await Promise.all(ports.map(clusterInfo));
      return infos.every((i) => i.cluster_state === 'ok' && i.cluster_known_nodes === '6');
    });
    const inSync = async () => {
      const roles = await Promise.all(ports.map((p) => cli(p, 'info', 'replication').catch(() => '')));
      const replicas = roles.filter((r) => r.includes('role:slave'));
      return replicas.length === 3 && replicas.every((r) => r.includes('master_link_status:up'));
    };
    await until('replicas in sync', 30_000, inSync);
    log(`Redis Cluster up on ${ports.join(', ')} (${dir})`);

    const masterPorts = async () => {
      for (const [port, child] of children) {
        if (child.exitCode !== null || child.signalCode !== null) continue;
        const nodes = await clusterNodes(port).catch(() => null);
        if (nodes) return nodes.filter((n) => n.master && !n.failed).map((n) => n.port);
      }
      throw new Error('Redis Cluster: no node answers');
    };

    // A master and a live replica of it, as the master's own node table says. Right after a
    // failover the old master may not yet be listed as the new one's replica: wait for it.
    const masterWithReplica = async (masterPort: number, timeoutMs: number) => {
      let found: { master: ClusterNode; replica: ClusterNode } | undefined;
      await until(`${masterPort} a master with a replica`, timeoutMs, async () => {
        const nodes = await clusterNodes(masterPort).catch(() => []);
        const master = nodes.find((n) => n.port === masterPort && n.master);
        const replica = nodes.find((n) => !n.master && n.masterId === master?.id && !n.failed);
        found = master && replica ? { master, replica } : undefined;
        return found !== undefined;
      });
      return found!;
    };

    const killMasterAndAwaitFailover = async (port: number, timeoutMs = 30_000) => {
      const survivor = ports.find(
        (p) => p !== port && children.get(p)!.exitCode === null && children.get(p)!.signalCode === null,
      )!;
      const before = await clusterNodes(survivor);
      const dead = before.find((n) => n.port === port);
      if (!dead?.master) throw new Error(`Redis Cluster: ${port} is not a master`);
      const deadSlot = dead.slots[0]?.[0];
      const started = Date.now();
      const exited = new Promise<void>((resolve) => children.get(port)!.once('exit', () => resolve()));
      children.get(port)!.kill('SIGKILL');
      await exited;
      let promotedPort = 0;
      await until(`failover of ${port}`, timeoutMs, async () => {
        const nodes = await clusterNodes(survivor).catch(() => []);
        // The node now serving the dead master's slots (a replica list read before the kill may be
        // stale right after an earlier failover; the slots are not).
        const promoted = nodes.find(
          (n) =>
            n.master &&
            !n.failed &&
            n.port !== port &&
            (deadSlot === undefined
              ? before.find((b) => b.id === n.id)?.masterId === dead.id
              : n.slots.some(([from, to]) => deadSlot >= from && deadSlot <= to)),
        );
        if (!promoted) return false;
        promotedPort = promoted.port;
        const infos = await Promise.all(ports.filter((p) => p !== port).map(clusterInfo));
        return infos.every((i) => i.cluster_state === 'ok');
      });
      return { promotedPort, tookMs: Date.now() - started };
    };

    const livePort = () =>
      ports.find((p) => children.get(p)!.exitCode === null && children.get(p)!.signalCode === null)!;
    return {
      seeds: ports.map((p) => `127.0.0.1:${p}`).join(','),
      async masterPortOf(key) {
        const port = livePort();
        const slot = Number((await cli(port, 'cluster', 'keyslot', key)).trim());
        const owner = (await clusterNodes(port)).find(
          (n) => n.master && !n.failed && n.slots.some(([from, to]) => slot >= from && slot <= to),
        );
        if (!owner) throw new Error(`Redis Cluster: no master serves slot ${slot}`);
        return owner.port;
      },
      nodes: ports.map((port) => ({ port, pid: children.get(port)!.pid! })),
      masterPorts,
      killMasterAndAwaitFailover,
      async killCaughtUpMaster(masterPort, timeoutMs = 30_000) {
        const { replica } = await masterWithReplica(masterPort, timeoutMs);
        const offset = async (port: number, field: string) =>
          new RegExp(`^${field}:(\\d+)`, 'm').exec(await cli(port, 'info', 'replication'))?.[1];
        await until(`replica ${replica.port} caught up with ${masterPort}`, timeoutMs, async () => {
          const [m, r] = await Promise.all([
            offset(masterPort, 'master_repl_offset'),
            offset(replica.port, 'slave_repl_offset'),
          ]);
          return m !== undefined && m === r;
        });
        const { promotedPort } = await killMasterAndAwaitFailover(masterPort, timeoutMs);
        startNode(masterPort); // its nodes.conf names it; the cluster tells it it is a replica now
        await until(`${masterPort} back as a replica in sync`, timeoutMs, async () => {
          const infos = await Promise.all(ports.map(clusterInfo));
          return infos.every((i) => i.cluster_state === 'ok') && (await inSync());
        });
        return { promotedPort };
      },
      async plannedFailover(masterPort, timeoutMs = 30_000) {
        const { replica } = await masterWithReplica(masterPort, timeoutMs);
        await cli(replica.port, 'cluster', 'failover');
        await until(`planned failover of ${masterPort}`, timeoutMs, async () => {
          const now = await clusterNodes(replica.port).catch(() => []);
          if (!now.find((n) => n.port === replica.port)?.master) return false;
          const infos = await Promise.all(ports.map(clusterInfo));
          return infos.every((i) => i.cluster_state === 'ok') && (await inSync());
        });
        return { promotedPort: replica.port };
      },
      async restartReplica(port, timeoutMs = 30_000) {
        const child = children.get(port)!;
        if ((await cli(port, 'info', 'replication')).includes('role:master'))
          throw new Error(`Redis Cluster: ${port} is a master`);
        await new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        });
        startNode(port); // the same port, directory and nodes.conf: it rejoins as the replica it was
        await until(`replica ${port} back in sync`, timeoutMs, async () => {
          const infos = await Promise.all(ports.map(clusterInfo));
          return infos.every((i) => i.cluster_state === 'ok') && (await inSync());
        });
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
