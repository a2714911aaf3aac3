import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The apps a deployment starts (docker-compose.yml, the Dockerfile, deploy/k8s). */
export type DeployedApp = 'mcp-edge' | 'admin-api' | 'worker';

/**
 * The node flags the build in `root` (a checkout with its `dist`) is deployed with for `app`: those
 * of its docker-compose.yml command for `dist/apps/<app>/src/main.js` (the Dockerfile, deploy/k8s and
 * `npm start` pass the same: libs/observability's async-context-frame spec
 * checks them). A bench starts each build with its own, so an older build (another worktree's `dist`)
 * runs as it was deployed and this one as it is, whatever flags either adds or lacks.
 */
export function deployedNodeArgs(root: string, app: DeployedApp): string[] {
  const script = `dist/apps/${app}/src/main.js`;
  const compose = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
  const line = compose.split('\n').find((l) => /\[\s*"node",/.test(l) && l.includes(`"${script}"`));
  if (!line) throw new Error(`${path.join(root, 'docker-compose.yml')} has no node command for ${script}`);
  const command = JSON.parse(line.slice(line.indexOf('['), line.lastIndexOf(']') + 1)) as string[];
  return command.slice(1, command.indexOf(script));
}
