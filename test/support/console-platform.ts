import { rm } from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import { expect } from 'vitest';
import { launchChromium } from './chromium';
import { buildConsole, newConsoleDir } from './console-browser';
import { RunningPlatform, startPlatform } from './platform';

/** A console browser test's platform: the apps serving a console build of their own, Chromium, admin tokens. */
export interface ConsolePlatform extends RunningPlatform {
  /** Chromium, once the console is built (it builds while the test sets up its data). */
  launchBrowser(): Promise<Browser>;
  /** A new admin token (`POST /v1/admin-tokens` with `body`, answered 201): its secret. */
  issueToken(body: Record<string, unknown>): Promise<string>;
  /** Closes Chromium and the apps, and removes the console build. */
  close(): Promise<void>;
}

/**
 * Starts the platform (startPlatform, with `overrides`) with its admin API serving a production
 * build of the console made for this file (`name` names its directory: a parallel build elsewhere
 * may replace dist/). The build runs beside the test's setup; launchBrowser waits for it.
 */
export async function startConsolePlatform(
  name: string,
  overrides: Record<string, string> = {},
): Promise<ConsolePlatform> {
  const consoleDir = await newConsoleDir(name);
  const built = buildConsole(consoleDir);
  // Awaited by launchBrowser or close; a failure before then is theirs to report.
  built.catch(() => undefined);
  const removeBuild = async () => {
    await built.catch(() => undefined);
    await rm(consoleDir, { recursive: true, force: true });
  };
  let platform: RunningPlatform;
  try {
    platform = await startPlatform({ ADMIN_CONSOLE_DIR: consoleDir, ...overrides });
  } catch (err) {
    await removeBuild();
    throw err;
  }
  let browser: Browser | undefined;
  return {
    ...platform,
    async launchBrowser() {
      await built;
      browser = await launchChromium();
      return browser;
    },
    async issueToken(body) {
      const res = await platform.admin('POST', '/v1/admin-tokens', body);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.secret as string;
    },
    async close() {
      await browser?.close();
      await platform.close();
      await removeBuild();
    },
  };
}
