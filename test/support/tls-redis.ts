// A redis-server of a test's own as managed services run it: TLS only (no plaintext port), an ACL
// user with a password, the default user off. Certificates are made here with openssl: a CA of
// the test's own and a server certificate for 127.0.0.1 signed by it.
import { ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../../tools/ports/free-port';
import { freeClusterPort } from '../../tools/redis-cluster/local-redis-cluster';

export interface TlsRedis {
  /** `rediss://127.0.0.1:<port>` (no credentials in it). */
  url: string;
  port: number;
  username: string;
  password: string;
  /** The PEM file of the CA that signed the server's certificate. */
  caFile: string;
  /** A CA that signed nothing here: a client trusting only it must refuse the server. */
  otherCaFile: string;
  /** The server's certificate and key (for 127.0.0.1; a sentinel beside it uses them too). */
  certFile: string;
  keyFile: string;
  /** A client certificate and key signed by the CA (required when the server requires client certificates). */
  clientCertFile: string;
  clientKeyFile: string;
  stop(): Promise<void>;
}

const execFileAsync = promisify(execFile);

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

/** A CA of the test's own, a certificate for 127.0.0.1 signed by it, and a CA that signed nothing here. */
function makeCertificates(dir: string): {
  caFile: string;
  otherCaFile: string;
  certFile: string;
  keyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
} {
  for (const ca of ['ca', 'other-ca'])
    openssl(
      dir,
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=tollgate test ${ca}`,
      '-keyout',
      `${ca}.key`,
      '-out',
      `${ca}.pem`,
    );
  openssl(
    dir,
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
  );
  writeFileSync(path.join(dir, 'san.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  openssl(
    dir,
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    'san.cnf',
    '-out',
    'server.pem',
  );
  // A client certificate signed by the same CA, for servers that require one (tls-auth-clients yes).
  openssl(
    dir,
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=tollgate',
    '-keyout',
    'client.key',
    '-out',
    'client.csr',
  );
  openssl(
    dir,
    'x509',
    '-req',
    '-in',
    'client.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-out',
    'client.pem',
  );
  return {
    caFile: path.join(dir, 'ca.pem'),
    otherCaFile: path.join(dir, 'other-ca.pem'),
    certFile: path.join(dir, 'server.pem'),
    keyFile: path.join(dir, 'server.key'),
    clientCertFile: path.join(dir, 'client.pem'),
    clientKeyFile: path.join(dir, 'client.key'),
  };
}

/** redis-server arguments for TLS only on `port`, one ACL user, the default user off. */
function tlsServerArgs(
  port: number,
  certs: ReturnType<typeof makeCertificates>,
  username: string,
  password: string,
  authClients = false,
): string[] {
  return [
    '--port',
    '0',
    '--tls-port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--tls-cert-file',
    certs.certFile,
    '--tls-key-file',
    certs.keyFile,
    '--tls-ca-cert-file',
    certs.caFile,
    '--tls-auth-clients',
    authClients ? 'yes' : 'no',
    '--save',
    '',
    '--appendonly',
    'no',
    // Managed services' shape: no anonymous access, one user with a password.
    '--user',
    'default',
    'off',
    '--user',
    username,
    'on',
    `>${password}`,
    '~*',
    '&*',
    '+@all',
  ];
}

/**
 * Resolves once a TLS client of the user gets PONG from the server on `port`; rejects if the
 * server exits first (a port taken since it was chosen) or does not answer within 30 s.
 */
async function awaitPong(
  port: number,
  username: string,
  password: string,
  certs: { caFile: string; clientCertFile?: string; clientKeyFile?: string },
  child: ChildProcess,
): Promise<void> {
  const probe = new Redis({
    host: '127.0.0.1',
    port,
    username,
    password,
    tls: {
      ca: readFileSync(certs.caFile, 'utf8'),
      ...(certs.clientCertFile && certs.clientKeyFile
        ? { cert: readFileSync(certs.clientCertFile, 'utf8'), key: readFileSync(certs.clientKeyFile, 'utf8') }
        : {}),
    },
    lazyConnect: true,
    retryStrategy: () => 50,
    maxRetriesPerRequest: null,
  });
  probe.on('error', () => undefined);
  let timer: NodeJS.Timeout | undefined;
  const failed = new Promise<never>((_, reject) => {
    child.once('exit', (code) => reject(new Error(`redis-server on ${port} exited (${code}) before answering`)));
    timer = setTimeout(() => reject(new Error(`redis-server on ${port} did not answer within 30 s`)), 30_000);
  });
  try {
    await Promise.race([
      probe
        .connect()
        .catch(() => undefined) // refused until it listens: retried
        .then(() => probe.ping()),
      failed,
    ]);
  } finally {
    clearTimeout(timer);
    probe.disconnect();
  }
}

function killAndWait(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/**
 * `clientCertificates`: the server also requires a client certificate signed by its CA
 * (`tls-auth-clients yes`), as a deployment with mutual TLS does.
 */
export async function startTlsRedis(options: { clientCertificates?: boolean } = {}): Promise<TlsRedis> {
  const dir = mkdtempSync(path.join(tmpdir(), 'tg-redis-tls-'));
  const certs = makeCertificates(dir);
  const port = await freePort();
  const username = 'tollgate';
  const password = randomBytes(18).toString('base64url');
  const args = tlsServerArgs(port, certs, username, password, options.clientCertificates);
  const child = spawn('redis-server', [...args, '--dir', dir], { stdio: 'ignore' });
  await awaitPong(port, username, password, certs, child);
  return {
    url: `rediss://127.0.0.1:${port}`,
    port,
    username,
    password,
    caFile: certs.caFile,
    otherCaFile: certs.otherCaFile,
    certFile: certs.certFile,
    keyFile: certs.keyFile,
    clientCertFile: certs.clientCertFile,
    clientKeyFile: certs.clientKeyFile,
    async stop() {
      await killAndWait(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface TlsSentinel {
  /** `host:port` of the sentinel (REDIS_SENTINELS, or the hosts of a rediss+sentinel:// URL). */
  seeds: string;
  masterName: string;
  /** The sentinel's own password (REDIS_SENTINEL_PASSWORD). */
  password: string;
  stop(): Promise<void>;
}

/**
 * A Sentinel on TLS only (same CA and certificates as `redis`, client certificates required when
 * the server requires them), with a password of its own, watching `redis` as its master and
 * talking to it over TLS as the ACL user.
 */
export async function startTlsSentinel(redis: TlsRedis, authClients: boolean): Promise<TlsSentinel> {
  const dir = mkdtempSync(path.join(tmpdir(), 'tg-sentinel-tls-'));
  const port = await freePort();
  const masterName = 'tgmaster';
  const password = randomBytes(18).toString('base64url');
  const conf = path.join(dir, 'sentinel.conf');
  writeFileSync(
    conf,
    [
      'port 0',
      `tls-port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `tls-cert-file ${redis.certFile}`,
      `tls-key-file ${redis.keyFile}`,
      `tls-ca-cert-file ${redis.caFile}`,
      // The sentinel's own links to the master are TLS too, with the client certificate if needed.
      'tls-replication yes',
      ...(authClients
        ? [`tls-client-cert-file ${redis.clientCertFile}`, `tls-client-key-file ${redis.clientKeyFile}`]
        : []),
      `tls-auth-clients ${authClients ? 'yes' : 'no'}`,
      `requirepass ${password}`,
      `sentinel monitor ${masterName} 127.0.0.1 ${redis.port} 1`,
      `sentinel auth-user ${masterName} ${redis.username}`,
      `sentinel auth-pass ${masterName} ${redis.password}`,
      `sentinel down-after-milliseconds ${masterName} 5000`,
    ].join('\n'),
  );
  const child = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
  const stop = async () => {
    await killAndWait(child);
    rmSync(dir, { recursive: true, force: true });
  };
  const probe = new Redis({
    host: '127.0.0.1',
    port,
    password,
    tls: {
      ca: readFileSync(redis.caFile, 'utf8'),
      cert: readFileSync(redis.clientCertFile, 'utf8'),
      key: readFileSync(redis.clientKeyFile, 'utf8'),
    },
    lazyConnect: true,
    retryStrategy: () => 50,
    maxRetriesPerRequest: null,
  });
  probe.on('error', () => undefined);
  try {
    await probe.connect().catch(() => undefined); // refused until it listens: retried
    // Answers once it listens and has reached the master (over TLS, as the ACL user).
    for (let i = 0; ; i++) {
      const master = (await probe.call('SENTINEL', 'master', masterName)) as string[];
      const flags = master[master.indexOf('flags') + 1];
      if (flags === 'master') break;
      if (i >= 600 || child.exitCode !== null)
        throw new Error(`sentinel on ${port} never reached its master (flags ${flags})`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } catch (err) {
    await stop();
    throw err;
  } finally {
    probe.disconnect();
  }
  return { seeds: `127.0.0.1:${port}`, masterName, password, stop };
}

export interface TlsRedisCluster {
  /** REDIS_CLUSTER_NODES. */
  seeds: string;
  username: string;
  password: string;
  caFile: string;
  stop(): Promise<void>;
}

/**
 * A Redis Cluster shaped like a managed one in cluster mode: 3 masters and 3 replicas on TLS only
 * (client, cluster bus and replication links), the ACL user the replicas also sync as.
 */
export async function startTlsRedisCluster(): Promise<TlsRedisCluster> {
  const dir = mkdtempSync(path.join(tmpdir(), 'tg-redis-tls-cluster-'));
  const certs = makeCertificates(dir);
  const username = 'tollgate';
  const password = randomBytes(18).toString('base64url');
  // Ports whose cluster bus ports (+10000) are free too.
  const taken = new Set<number>();
  const ports: number[] = [];
  for (let i = 0; i < 6; i++) ports.push(await freeClusterPort(taken));
  const children = ports.map((port) => {
    const nodeDir = path.join(dir, String(port));
    mkdirSync(nodeDir);
    return spawn(
      'redis-server',
      [
        ...tlsServerArgs(port, certs, username, password),
        '--dir',
        nodeDir,
        '--tls-cluster',
        'yes',
        '--tls-replication',
        'yes',
        '--masteruser',
        username,
        '--masterauth',
        password,
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        '1000',
      ],
      { stdio: 'ignore' },
    );
  });
  const stop = async () => {
    await Promise.all(children.map(killAndWait));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.all(ports.map((port, i) => awaitPong(port, username, password, certs, children[i])));
    const cli = async (...args: string[]) =>
      (
        await execFileAsync(
          'redis-cli',
          ['--tls', '--cacert', certs.caFile, '--user', username, '--pass', password, '--no-auth-warning', ...args],
          { timeout: 60_000 },
        )
      ).stdout;
    await cli('--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes');
    // Every node sees the cluster ok and every replica's link to its master is up.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const infos = await Promise.all(
        ports.map(
          async (p) =>
            (await cli('-p', String(p), 'cluster', 'info')) + (await cli('-p', String(p), 'info', 'replication')),
        ),
      );
      const ok = infos.every((i) => i.includes('cluster_state:ok'));
      const linked = infos.filter((i) => i.includes('role:slave') && i.includes('master_link_status:up'));
      if (ok && linked.length === 3) break;
      if (Date.now() > deadline) throw new Error('TLS Redis Cluster: not ok after 60 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { seeds: ports.map((p) => `127.0.0.1:${p}`).join(','), username, password, caFile: certs.caFile, stop };
}
