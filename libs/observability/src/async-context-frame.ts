/**
 * The Node flag that backs AsyncLocalStorage with AsyncContextFrame (the default from Node 24 on).
 * Without it, Node 22 implements AsyncLocalStorage with promise hooks: once any store is in use
 * (the request scope of log-context.ts is, on every request) every promise the process makes runs
 * three hooks and gets the store copied onto it, which was about a tenth of the edge's CPU per
 * call in bench:overhead. Every launcher the repository ships (Dockerfile, docker-compose, the
 * Kubernetes manifests, `npm start`, the benches) passes it.
 */
export const ASYNC_CONTEXT_FRAME_FLAG = '--experimental-async-context-frame';

/**
 * Whether this process's AsyncLocalStorage runs on promise hooks: Node before 24 started without
 * ASYNC_CONTEXT_FRAME_FLAG (on the command line or in NODE_OPTIONS).
 */
export function asyncLocalStorageOnPromiseHooks(
  nodeVersion: string,
  execArgv: readonly string[],
  nodeOptions: string | undefined,
): boolean {
  if (Number(nodeVersion.replace(/^v/, '').split('.')[0]) >= 24) return false;
  return (
    !execArgv.includes(ASYNC_CONTEXT_FRAME_FLAG) && !(nodeOptions ?? '').split(/\s+/).includes(ASYNC_CONTEXT_FRAME_FLAG)
  );
}
