import { Browser, chromium } from 'playwright-core';

/** Debian's chromium (installed by .ci/run); playwright's own browser download does not work here. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Headless Debian chromium driven by playwright-core. Background networking and component
 * updates are off: this machine's closed network refuses their connections.
 */
export function launchChromium(): Promise<Browser> {
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
