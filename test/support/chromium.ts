import { Browser, chromium } from 'playwright-core';

/**
 * Debian's Chromium headless shell (package chromium-headless-shell, installed by .ci/run):
 * playwright's own browser download does not work here. The shell, without the full browser's
 * windowing and UI, took half the CPU of /usr/bin/chromium over the console's browser tests (165 s
 * against 312 s, 14 files), the largest single cost of the suite.
 */
export const CHROMIUM_PATH = '/usr/bin/chromium-headless-shell';

/**
 * The headless shell driven by playwright-core. Background networking and component updates are
 * off: this machine's closed network refuses their connections.
 */
function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
    ],
  });
}

/**
 * One Chromium per test worker: a worker runs its files one after another (isolate: false), and a
 * launch costs about a second of CPU. A file closes the contexts it opened (`closeContexts`), not the
 * browser, which goes with the worker (its pipe to Chromium closes).
 */
let workerBrowser: Promise<Browser> | undefined;

export function workerChromium(): Promise<Browser> {
  workerBrowser ??= launchChromium().then((browser) => {
    browser.on('disconnected', () => (workerBrowser = undefined));
    return browser;
  });
  return workerBrowser;
}

/** Closes every context open in `browser`: a file's own, as the worker runs one file at a time. */
export async function closeContexts(browser: Browser | undefined): Promise<void> {
  await Promise.allSettled((browser?.contexts() ?? []).map((context) => context.close()));
}
