import type { Browser, Page } from 'playwright-core';
import { expect, inject } from 'vitest';
import { closeContexts, workerChromium } from './chromium';
import { signInWithToken } from './console-browser';
import { RunningPlatform, startPlatform } from './platform';

/** A console browser test's platform: the apps serving the run's console build, Chromium, admin tokens. */
export interface ConsolePlatform extends RunningPlatform {
  /** The test worker's Chromium; what the file opens in it is closed with the platform. */
  launchBrowser(): Promise<Browser>;
  /**
   * The console at `pagePath`, signed in with `token`, in a window of `viewport` (1280 x 900 unless
   * given). The file's tab for that token: signed in on the first call, then loaded again at
   * `pagePath` for each later one (a full load: nothing a test left open in the page carries over;
   * the token is kept per tab, as a person's stays signed in) instead of a new context, renderer
   * and sign-in for each test. A test that needs a context of its own (a phone, a route or a
   * listener of its own, the sign-in itself) still opens one with `launchBrowser()`.
   */
  openConsole(token: string, pagePath?: string, viewport?: { width: number; height: number }): Promise<Page>;
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
  const launchBrowser = async () => (browser = await workerChromium());
  const tabs = new Map<string, Page>();
  return {
    ...platform,
    launchBrowser,
    async openConsole(token, pagePath = '/', viewport = { width: 1280, height: 900 }) {
      const tab = tabs.get(token);
      if (tab && !tab.isClosed()) {
        const size = tab.viewportSize();
        if (size?.width !== viewport.width || size.height !== viewport.height) await tab.setViewportSize(viewport);
        await tab.mouse.move(0, 0); // no hover left where the last test clicked
        await tab.goto(`${platform.adminUrl}${pagePath}`);
        await tab.getByTestId('role-badge').waitFor();
        return tab;
      }
      const context = await (await launchBrowser()).newContext({ viewport });
      const page = await signInWithToken(context, platform.adminUrl, token, pagePath);
      tabs.set(token, page);
      return page;
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
