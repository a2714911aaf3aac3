import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { expect } from 'vitest';

/** What the console's browser tests share: signing in, axe-core and the CSV it downloads. */
export const ROOT = path.resolve(__dirname, '../..');
const SCREENSHOTS = path.join(ROOT, 'docs/screenshots');

/**
 * Saves the page as `docs/screenshots/<name>` when TEST_SCREENSHOTS=1 (`TEST_SCREENSHOTS=1 npx vitest
 * run test/e2e/console` refreshes the docs' pictures); otherwise nothing: a test run leaves the
 * tracked files as they were, and a full-page PNG costs Chromium CPU the suite need not spend.
 */
export async function saveScreenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  if (process.env.TEST_SCREENSHOTS === '1') await page.screenshot({ path: path.join(SCREENSHOTS, name), ...options });
}

/** Opens `pagePath` of the console and signs in with an admin token, as a person would. */
export async function signInWithToken(
  context: BrowserContext,
  adminUrl: string,
  token: string,
  pagePath = '/',
): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${adminUrl}${pagePath}`);
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in with token' }).click();
  await page.getByTestId('role-badge').waitFor();
  return page;
}

/** How long a read of the page waits for the state it checks (a loaded two-core CI runner is slow). */
const SETTLE_TIMEOUT_MS = 15_000;

/**
 * `expect.poll` for a read of the page (textContent, count, evaluateAll, getAttribute...) whose value
 * can still change after the last wait: the answer of another request, a refusal after a click, a table
 * that re-renders. The read is retried until the matcher holds; a page that never shows it still fails.
 * A check that something is absent passes at once: wait for the final state before it.
 *
 *   await eventually(() => page.getByTestId('budget-row').count()).toBe(3);
 */
export function eventually<T>(read: () => T | Promise<T>) {
  return expect.poll(read, { timeout: SETTLE_TIMEOUT_MS, interval: 100 });
}

let axeSource: Promise<string> | undefined;

/** axe-core in the page (evaluated, so the page's CSP stays on); serious or critical violations fail. */
export async function expectAccessible(page: Page, name: string): Promise<void> {
  axeSource ??= readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.mouse.move(1, 1); // no hover state left from the last click
  // Once per loaded document: the console's own navigation keeps it.
  if (await page.evaluate('typeof axe === "undefined"')) await page.evaluate(`${await axeSource}\n;undefined`);
  // A string, not a function: the tests are type-checked without the DOM library.
  const violations =
    (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((res) => res.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.slice(0, 3).map((n) => ({ target: n.target.join(' '), why: n.any.map((c) => c.message).join('; ') })),
    })))`)) as { id: string; impact: string; nodes: { target: string; why: string }[] }[];
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad, `${name}: ${JSON.stringify(bad, null, 1)}`).toEqual([]);
}

/** A small RFC 4180 reader for the CSV the API and the console write (quoted fields may hold commas and quotes). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  return rows;
}

/** `"1.25"` -> 1250000n: the CSV's exact decimals back to micro-units. */
export function decimalToMicros(decimal: string): bigint {
  const [units, fraction = ''] = decimal.split('.');
  return BigInt(units) * 1_000_000n + BigInt((fraction + '000000').slice(0, 6));
}

/**
 * Fails when the element sits in a box that scrolls up and down inside the page (a `max-height` scroll
 * container): what hid the explorer's total line. Sideways scrolling is fine.
 */
export async function expectNotInVerticalScrollBox(locator: Locator): Promise<void> {
  // Typed loosely: the tests are type-checked without the DOM library.
  const boxes = await locator.evaluate((el: any) => {
    const g = globalThis as any;
    const found: string[] = [];
    for (let n = el.parentElement; n && n !== g.document.body; n = n.parentElement) {
      const style = g.getComputedStyle(n);
      const scrolls = style.overflowY === 'auto' || style.overflowY === 'scroll';
      // A capped height scrolls as soon as the rows outgrow it, even if today's rows fit.
      if (scrolls && (style.maxHeight !== 'none' || n.scrollHeight > n.clientHeight + 1)) {
        found.push(n.className || n.tagName);
      }
    }
    return found;
  });
  expect(boxes).toEqual([]);
}
