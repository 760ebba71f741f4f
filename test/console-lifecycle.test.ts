/**
 * The console's Operations page shows the lifecycle scanner (headless Chromium against a real
 * server): no cycle yet, then Run now, and the line with the cycle's counts. Screenshot under
 * test-output/console/operations-lifecycle.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { CreateBucketCommand, PutBucketLifecycleConfigurationCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { repoRoot, s3ClientFor, testCredentials } from './helpers/server-process.js';
import { startConsoleServer, type ConsoleServer } from './helpers/console-client.js';
import { chromiumPresent, launchChromium, signInOnPage } from './helpers/chromium.js';

const haveChromium = chromiumPresent('the console lifecycle test');

const shots = join(repoRoot, 'test-output/console');
let root: string;
let running: ConsoleServer;
let browser: Browser;
let page: Page;

describe.skipIf(!haveChromium)('the lifecycle scanner on the console\'s Operations page', () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-console-lifecycle-'));
    await mkdir(shots, { recursive: true });
    running = await startConsoleServer([join(root, 'd{1...4}')], { SVC_LIFECYCLE_CLOCK_OFFSET: '3d' });
    const s3 = s3ClientFor(running.server.url);
    await s3.send(new CreateBucketCommand({ Bucket: 'logs' }));
    for (const key of ['app/1.log', 'app/2.log', 'keep.txt']) await s3.send(new PutObjectCommand({ Bucket: 'logs', Key: key, Body: 'x' }));
    await s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: 'logs', LifecycleConfiguration: { Rules: [{ ID: 'app', Status: 'Enabled', Filter: { Prefix: 'app/' }, Expiration: { Days: 1 } }] } }));
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await running?.server.kill();
    await rm(root, { recursive: true, force: true });
  });

  it('says no cycle has run, runs one on Run now and shows what it expired', async () => {
    await signInOnPage(page, running.consoleUrl);
    await page.goto(`${running.consoleUrl}/svc/console/#/operations`);
    const card = page.getByRole('region', { name: 'Lifecycle expiry' });
    await card.getByText('No lifecycle cycle has run on this node yet').waitFor();
    await card.getByRole('button', { name: 'Run now' }).click();
    const line = card.locator('.lifecycle-line');
    await expect.poll(() => line.textContent(), { timeout: 15_000 }).toContain('Last cycle');
    const text = (await line.textContent()) ?? '';
    expect(text).toContain('1 buckets · 2 objects scanned · expired 2 objects, 0 noncurrent versions, 0 delete markers, 0 uploads · 0 locked kept · 0 errors');
    await line.scrollIntoViewIfNeeded();
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(shots, 'operations-lifecycle.png') });
  }, 60_000);
});
