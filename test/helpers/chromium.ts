/** Debian's Chromium for browser tests: whether it is there (a missing one skips with the reason, or fails under CI), and a headless launch. */
import { existsSync } from 'node:fs';
import type { Browser, Locator, Page } from 'playwright-core';
import { testCredentials } from './server-process.js';

export const chromiumPath = '/usr/bin/chromium';

/** True when Chromium is installed; otherwise warns that `what` is skipped (throws under CI=true). */
export function chromiumPresent(what: string): boolean {
  if (existsSync(chromiumPath)) return true;
  if (process.env.CI === 'true') throw new Error(`${what} needs Chromium at ${chromiumPath} (Debian package chromium); CI installs it`);
  console.warn(`skipping ${what}: no Chromium at ${chromiumPath} (apt-get install chromium)`);
  return false;
}

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** Opens the console and signs in (the root credentials unless others are given), waiting for the Overview page. */
export async function signInOnPage(page: Page, consoleUrl: string, credentials = { accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey }): Promise<void> {
  await page.goto(`${consoleUrl}/svc/console/`);
  await page.getByLabel('Access key').fill(credentials.accessKey);
  await page.getByLabel('Secret key').fill(credentials.secretKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

/**
 * A new page of its own browser context at `viewport`, signed in (the root credentials, or a
 * user's, who lands on Buckets), then at the console's `#/<hash>`.
 */
export async function openConsolePage(browser: Browser, consoleUrl: string, options: { viewport: { width: number; height: number }; hash: string; credentials?: { accessKey: string; secretKey: string } }): Promise<Page> {
  const page = await (await browser.newContext({ viewport: options.viewport })).newPage();
  if (options.credentials) {
    await page.goto(`${consoleUrl}/svc/console/`);
    await page.getByLabel('Access key').fill(options.credentials.accessKey);
    await page.getByLabel('Secret key').fill(options.credentials.secretKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Buckets', exact: true }).waitFor();
  } else {
    await signInOnPage(page, consoleUrl);
  }
  await page.goto(`${consoleUrl}/svc/console/#/${options.hash}`);
  return page;
}

/** Presses Tab until `target` has the focus, as a keyboard user reaches it; throws after `presses` presses. */
export async function tabTo(page: Page, target: Locator, presses = 100): Promise<void> {
  for (let press = 0; press < presses; press += 1) {
    if (await target.evaluate((element) => element === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`${String(target)} is not reached with ${presses} presses of Tab`);
}

/** How far the document is wider than the window (0 or less: the page does not scroll sideways). */
export async function documentOverflow(page: Page): Promise<number> {
  return (await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
}
