// A redis-server of a test's own as managed services run it: TLS only (no plaintext port), an ACL
// user with a password, the default user off. Certificates are made here with openssl: a CA of
// the test's own and a server certificate for 127.0.0.1 signed by it.
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../../tools/ports/free-port';

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
  stop(): Promise<void>;
}

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

export async function startTlsRedis(): Promise<TlsRedis> {
  const dir = mkdtempSync(path.join(tmpdir(), 'tg-redis-tls-'));
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

  const port = await freePort();
  const username = 'tollgate';
  const password = randomBytes(18).toString('base64url');
  const child: ChildProcess = spawn(
    'redis-server',
    [
      '--port',
      '0',
      '--tls-port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--tls-cert-file',
      path.join(dir, 'server.pem'),
      '--tls-key-file',
      path.join(dir, 'server.key'),
      '--tls-ca-cert-file',
      path.join(dir, 'ca.pem'),
      '--tls-auth-clients',
      'no',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
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
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const caFile = path.join(dir, 'ca.pem');
  const probe = new Redis({
    host: '127.0.0.1',
    port,
    username,
    password,
    tls: { ca: readFileSync(caFile, 'utf8') },
    lazyConnect: true,
    retryStrategy: () => 50,
    maxRetriesPerRequest: null,
  });
  probe.on('error', () => undefined);
  await probe.connect().catch(() => undefined);
  await probe.ping();
  probe.disconnect();
  return {
    url: `rediss://127.0.0.1:${port}`,
    port,
    username,
    password,
    caFile,
    otherCaFile: path.join(dir, 'other-ca.pem'),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
