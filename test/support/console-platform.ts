import type { Browser } from 'playwright-core';
import { expect, inject } from 'vitest';
import { closeContexts, workerChromium } from './chromium';
import { RunningPlatform, startPlatform } from './platform';

/** A console browser test's platform: the apps serving the run's console build, Chromium, admin tokens. */
export interface ConsolePlatform extends RunningPlatform {
  /** The test worker's Chromium; what the file opens in it is closed with the platform. */
  launchBrowser(): Promise<Browser>;
  /** A new admin token (`POST /v1/admin-tokens` with `body`, answered 201): its secret. */
  issueToken(body: Record<string, unknown>): Promise<string>;
  /** Closes the browser contexts the file opened and the apps. */
  close(): Promise<void>;
}

/**
 * Starts the platform (startPlatform, with `overrides`) with its admin API serving the console
 * build the run's global setup made (`inject('consoleBuildDir')`).
 */
export async function startConsolePlatform(overrides: Record<string, string> = {}): Promise<ConsolePlatform> {
  const platform = await startPlatform({ ADMIN_CONSOLE_DIR: inject('consoleBuildDir'), ...overrides });
  let browser: Browser | undefined;
  return {
    ...platform,
    async launchBrowser() {
      browser = await workerChromium();
      return browser;
    },
    async issueToken(body) {
      const res = await platform.admin('POST', '/v1/admin-tokens', body);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.secret as string;
    },
    async close() {
      await closeContexts(browser);
      await platform.close();
    },
  };
}
