/** Debian's Chromium for browser tests: whether it is there (a missing one skips with the reason, or fails under CI), and a headless launch. */
import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

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
