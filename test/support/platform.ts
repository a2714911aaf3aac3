import { INestApplication } from '@nestjs/common';
import { loadAdminConfig, loadEdgeConfig, loadWorkerConfig } from '@tollgate/config';
import { createTestEnv, TestClock, TestEnv, TestRedisMode } from '@tollgate/testing';
import { createAdminApp } from '../../apps/admin-api/src/admin-app';
import { createEdgeApp } from '../../apps/mcp-edge/src/edge-app';
import { createWorkerApp } from '../../apps/worker/src/worker-app';

export interface RunningPlatform {
  env: TestEnv;
  edgeUrl: string;
  adminUrl: string;
  workerUrl: string;
  adminToken: string;
  /** fetch against the admin API with the platform-admin token. */
  admin<T = any>(
    method: string,
    path: string,
    body?: unknown,
    token?: string,
  ): Promise<{ status: number; body: T; headers: Headers }>;
  close(): Promise<void>;
}

/** Listens on the port the variables name (0: any), so a test may fix public URLs in advance. */
async function listen(app: INestApplication, port = 0): Promise<string> {
  await app.listen(port, '127.0.0.1');
  return (await app.getUrl()).replace('[::1]', '127.0.0.1');
}

/**
 * Boots the three real apps in this process on their own database and Redis prefix; `redis:
 * 'cluster'` runs them on the run's Redis Cluster instead of standalone Redis. `clock`: the
 * edge's time (a TestClock the test moves), else the system clock; `adminClock`: the admin API's.
 */
export async function startPlatform(
  overrides: Record<string, string> = {},
  options: { redis?: TestRedisMode; clock?: TestClock; adminClock?: TestClock } = {},
): Promise<RunningPlatform> {
  const env = await createTestEnv(overrides, options);
  const worker = await createWorkerApp(loadWorkerConfig(env.vars));
  const adminApp = await createAdminApp(loadAdminConfig(env.vars), options.adminClock);
  const edge = await createEdgeApp(loadEdgeConfig(env.vars), options.clock);
  const [workerUrl, adminUrl, edgeUrl] = [
    await listen(worker),
    await listen(adminApp, Number(env.vars.ADMIN_PORT ?? 0)),
    await listen(edge, Number(env.vars.EDGE_PORT ?? 0)),
  ];
  return {
    env,
    edgeUrl,
    adminUrl,
    workerUrl,
    adminToken: env.adminToken,
    async admin(method, path, body, token = env.adminToken) {
      const res = await fetch(`${adminUrl}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
    },
    async close() {
      await Promise.allSettled([
        closeNamed('edge', edge),
        closeNamed('admin API', adminApp),
        closeNamed('worker', worker),
      ]);
      await env.cleanup();
    },
  };
}

/**
 * Closes an app, saying on stderr which one is still closing after 30 s and which of its
 * providers' shutdown hooks have not returned: a close that hangs (seen on cluster Redis,
 * 2026-11-27) then names its app and hook in the failed run's output instead of only a hook
 * timeout. It still waits: the hang stays a failure.
 */
async function closeNamed(name: string, app: INestApplication): Promise<void> {
  const pending = trackShutdownHooks(app);
  const slow = setTimeout(
    () =>
      console.error(
        `platform close: the ${name} is still closing after 30 s; waiting on ${[...pending].join(', ') || 'no hook (the server?)'}`,
      ),
    30_000,
  );
  try {
    await app.close();
  } finally {
    clearTimeout(slow);
  }
}

const SHUTDOWN_HOOKS = ['onModuleDestroy', 'beforeApplicationShutdown', 'onApplicationShutdown'] as const;

/** Wraps every provider's shutdown hooks on this instance, keeping the names of those running. */
function trackShutdownHooks(app: INestApplication): Set<string> {
  const pending = new Set<string>();
  const modules: Map<string, { providers: Map<unknown, { instance: unknown }> }> = (app as any).container.getModules();
  for (const module of modules.values()) {
    for (const wrapper of module.providers.values()) {
      const instance = wrapper.instance as Record<string, unknown> | null;
      if (!instance || typeof instance !== 'object') continue;
      for (const hook of SHUTDOWN_HOOKS) {
        const original = instance[hook];
        if (typeof original !== 'function') continue;
        const label = `${instance.constructor?.name ?? '?'}.${hook}`;
        instance[hook] = async (...args: unknown[]) => {
          pending.add(label);
          try {
            return await original.apply(instance, args);
          } finally {
            pending.delete(label);
          }
        };
      }
    }
  }
  return pending;
}
