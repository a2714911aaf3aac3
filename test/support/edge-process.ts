import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { freePort } from './free-port';

const ROOT = path.resolve(__dirname, '../..');

export interface AppProcess {
  port: number;
  child: ChildProcess;
  /** Its stdout, one entry a line. */
  lines: string[];
  exited: Promise<{ code: number | null; at: number }>;
}

/** The edge in its own process. */
export type EdgeProcess = AppProcess;

/** Each app's entry point, port variable and the log line that says it serves. */
const APPS = {
  edge: { main: 'apps/mcp-edge/src/main.ts', portVar: 'EDGE_PORT', ready: 'MCP edge listening' },
  admin: { main: 'apps/admin-api/src/main.ts', portVar: 'ADMIN_PORT', ready: 'admin API listening' },
  worker: { main: 'apps/worker/src/main.ts', portVar: 'WORKER_PORT', ready: 'worker health on' },
} as const;

/**
 * An app as production runs it: its own process, its `main.ts` (compiled on load by
 * test/support/ts-register.cjs), with `vars`; resolves once it logs that it serves (JSON logs).
 */
export async function startAppProcess(app: keyof typeof APPS, vars: Record<string, string>): Promise<AppProcess> {
  const { main, portVar, ready } = APPS[app];
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['-r', path.join(ROOT, 'test/support/ts-register.cjs'), path.join(ROOT, main)],
    {
      cwd: ROOT,
      env: { ...process.env, ...vars, [portVar]: String(port), LOG_LEVEL: 'log', LOG_FORMAT: 'json' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = once(child, 'exit').then(([code]) => ({ code: code as number | null, at: Date.now() }));
  const lines: string[] = [];
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  // Resolved by the line that says it serves, as it arrives; rejected if the process goes first.
  await new Promise<void>((resolve, reject) => {
    let buffered = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      lines.push(...parts);
      if (parts.some((l) => l.includes(ready))) resolve();
    });
    void exited.then(({ code }) => reject(new Error(`${app} exited (${code}) before serving: ${stderr}`)));
  });
  return { port, child, lines, exited };
}

/** The edge as production runs it (see startAppProcess). */
export function startEdgeProcess(vars: Record<string, string>): Promise<EdgeProcess> {
  return startAppProcess('edge', vars);
}

/** Ends an app process with SIGTERM (its drain) and waits for it to exit. */
export async function stopAppProcess(app: AppProcess | undefined): Promise<void> {
  if (!app || app.child.exitCode !== null) return;
  app.child.kill('SIGTERM');
  await app.exited;
}
