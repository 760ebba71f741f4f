/**
 * The Users page's audit section in a real browser (Debian's Chromium, headless) against a real
 * server: after a bucket creation, a user added, an upload and an anonymous refused read, root
 * sees them newest first with principal, API, resource and outcome, and the outcome filter keeps
 * only the refusals. Screenshot: test-output/console/users-audit.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { repoRoot, s3ClientFor, testCredentials } from './helpers/server-process.js';
import { startConsoleServer, type ConsoleServer } from './helpers/console-client.js';
import { admin } from './helpers/admin-client.js';
import { chromiumPresent, launchChromium, signInOnPage } from './helpers/chromium.js';

const haveChromium = chromiumPresent('the console audit browser test');
const shots = join(repoRoot, 'test-output/console');
let root: string;
let running: ConsoleServer;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

describe.skipIf(!haveChromium)('the audit section of the Users page in Chromium', () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-audit-ui-'));
    await mkdir(shots, { recursive: true });
    running = await startConsoleServer([join(root, 'd{1...4}')]);
    const url = running.server.url;
    await s3ClientFor(url).send(new CreateBucketCommand({ Bucket: 'photos' }));
    const added = await admin(url, 'POST', '/svc/admin/v4/iam/user/add', '', { body: JSON.stringify({ accessKey: 'alice', secretKey: 'alice-secret-key', policies: ['readwrite'] }) });
    expect(added.status).toBe(200);
    await s3ClientFor(url, { credentials: { accessKeyId: 'alice', secretAccessKey: 'alice-secret-key' } }).send(new PutObjectCommand({ Bucket: 'photos', Key: 'cat.jpg', Body: 'meow' }));
    expect((await fetch(`${url}/photos/cat.jpg`)).status).toBe(403);
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await running?.server.kill();
    await rm(root, { recursive: true, force: true });
  });

  it('lists the recent entries and filters them by outcome', async () => {
    await signInOnPage(page, running.consoleUrl);
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Users' }).click();
    const section = page.getByRole('region', { name: 'Audit (this node)' });
    const rows = section.locator('tbody tr');
    await expect.poll(() => rows.count()).toBeGreaterThanOrEqual(5);
    const texts = await rows.allTextContents();
    // Newest first: the anonymous refusal, alice's upload, the user add, the bucket creation (after root's sign-in, the newest).
    const order = ['anonymous', 'PutObject', 'admin:user/add', 'CreateBucket'].map((needle) => texts.findIndex((text) => text.includes(needle)));
    expect(order.every((index) => index >= 0), texts.join('\n')).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(texts.find((text) => text.includes('PutObject'))).toMatch(/alice.*photos\/cat\.jpg.*allowed/);
    expect(await section.textContent()).toMatch(/\d+ recorded since start/);
    await page.screenshot({ path: join(shots, 'users-audit-all.png'), fullPage: true });

    await section.getByLabel('Filter by outcome').selectOption('denied');
    await expect.poll(async () => (await rows.allTextContents()).every((text) => text.includes('denied'))).toBe(true);
    // The refused read, and the console's own session check before sign-in (401, no session).
    const denied = await rows.allTextContents();
    expect(denied.some((text) => /anonymous.*GetObject.*photos\/cat\.jpg.*denied.*403 AccessDenied/.test(text)), denied.join('\n')).toBe(true);
    expect(denied.every((text) => !text.includes('PutObject') && !text.includes('CreateBucket'))).toBe(true);
    await section.scrollIntoViewIfNeeded();
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(shots, 'users-audit.png') });
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
