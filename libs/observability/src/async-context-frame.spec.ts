import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ASYNC_CONTEXT_FRAME_FLAG, asyncLocalStorageOnPromiseHooks } from './async-context-frame';

const ROOT = path.resolve(__dirname, '../../..');

describe('asyncLocalStorageOnPromiseHooks', () => {
  it('should say so when Node 22 starts without the flag', () => {
    expect(asyncLocalStorageOnPromiseHooks('22.23.3', ['--enable-source-maps'], undefined)).toBe(true);
  });

  it('should not when the flag is on the command line or in NODE_OPTIONS, or on Node 24', () => {
    expect(asyncLocalStorageOnPromiseHooks('22.23.3', [ASYNC_CONTEXT_FRAME_FLAG], undefined)).toBe(false);
    expect(asyncLocalStorageOnPromiseHooks('22.23.3', [], `--max-old-space-size=512 ${ASYNC_CONTEXT_FRAME_FLAG}`)).toBe(
      false,
    );
    expect(asyncLocalStorageOnPromiseHooks('24.11.0', [], undefined)).toBe(false);
  });

  it('should be passed by every launcher the repository ships', () => {
    const launchers = [
      'Dockerfile',
      'docker-compose.yml',
      'deploy/k8s/base/edge.yaml',
      'deploy/k8s/base/admin-api.yaml',
      'deploy/k8s/base/worker.yaml',
    ];
    for (const file of launchers) {
      const commands = readFileSync(path.join(ROOT, file), 'utf8')
        .split('\n')
        .filter((line) => /\[\s*"node",/.test(line) && line.includes('dist/apps/'));
      expect(commands.length, file).toBeGreaterThan(0);
      for (const command of commands) expect(command, file).toContain(`"${ASYNC_CONTEXT_FRAME_FLAG}"`);
    }
  });
});
