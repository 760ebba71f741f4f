/**
 * The console shows what is wrong and offers only what may be done, in Chromium against a real
 * server on four drives (EC:2) with fault injection: a locked version's refused delete is shown in
 * its dialog; a drive taken offline turns the health banner and the navigation mark amber, two
 * turn them red, on every page, with the runbook linked; rebalance and decommission are disabled
 * on one pool with the reason; a folder that cannot be listed says so and offers no upload; and a
 * readonly user is offered no control its policies refuse (the server's judgement, GET permissions).
 * Screenshots under test-output/console/ (health-*.png, readonly-*.png) at 1440×900 and 390×844.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { CreateBucketCommand, ListObjectVersionsCommand, PutObjectCommand, PutObjectLegalHoldCommand, type S3Client } from '@aws-sdk/client-s3';
import { repoRoot, s3ClientFor } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { signIn, startConsoleServer, type ConsoleServer } from './helpers/console-client.js';
import { chromiumPresent, launchChromium, signInOnPage } from './helpers/chromium.js';

const haveChromium = chromiumPresent('the console health and permissions browser test');
const shots = join(repoRoot, 'test-output/console');
const viewer = { accessKey: 'viewer', secretKey: 'viewer-secret-1' };
const amber = 'rgb(253, 243, 215)';
const red = 'rgb(253, 232, 230)';

let root: string;
let running: ConsoleServer;
let browser: Browser;
let page: Page;
let s3: S3Client;
const pageErrors: string[] = [];

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: join(shots, `${name}.png`) });
}

async function go(hash: string): Promise<void> {
  await page.goto(`${running.consoleUrl}/svc/console/#/${hash}`);
}

async function setOffline(drive: string, offline: boolean): Promise<void> {
  const answer = await admin(running.server.url, 'POST', '/svc/admin/v4/faults', `drive=${encodeURIComponent(join(root, drive))}`, { body: JSON.stringify(offline ? { offline: true } : {}) });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
}

/** Serious and critical WCAG 2 A/AA violations on the page as it is now (the banner showing). */
async function violations(): Promise<string[]> {
  const { AxeBuilder } = await import('@axe-core/playwright');
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return result.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical').map((violation) => `${violation.id}: ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).slice(0, 3).join(', ')}`);
}

const banner = () => page.getByRole('region', { name: 'Deployment health' });
// Runs in the page: the browser's getComputedStyle, reached through globalThis (the test compiles without the DOM types).
const bannerColour = () => banner().evaluate((element) => (globalThis as unknown as { getComputedStyle(node: unknown): { backgroundColor: string } }).getComputedStyle(element).backgroundColor);
const navMark = (link: string) => page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: new RegExp(`^${link}`) }).locator('.health-mark');

describe.skipIf(!haveChromium)('the console shows what is wrong and offers what may be done', () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-console-health-'));
    await mkdir(shots, { recursive: true });
    running = await startConsoleServer([join(root, 'd{1...4}')], { SVC_FAULT_INJECTION: 'on' });
    s3 = s3ClientFor(running.server.url);
    await s3.send(new CreateBucketCommand({ Bucket: 'vault', ObjectLockEnabledForBucket: true }));
    await s3.send(new PutObjectCommand({ Bucket: 'vault', Key: 'contract.pdf', Body: 'signed' }));
    await s3.send(new PutObjectLegalHoldCommand({ Bucket: 'vault', Key: 'contract.pdf', LegalHold: { Status: 'ON' } }));
    await s3.send(new CreateBucketCommand({ Bucket: 'photos' }));
    await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'cat.jpg', Body: 'meow', CacheControl: 'max-age=60', Tagging: 'colour=black&size=small' }));
    const rootSession = await signIn(running.consoleUrl);
    const created = await rootSession.call('POST', 'users', { body: { ...viewer, policies: ['readonly'] } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1440, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] })).newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await signInOnPage(page, running.consoleUrl);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await running?.server.kill();
    await rm(root, { recursive: true, force: true });
  });

  it('shows the refusal of a locked version\'s delete in its dialog, and the version stays', async () => {
    await go('browse/vault/');
    await page.getByRole('button', { name: 'contract.pdf', exact: true }).click();
    const details = page.getByRole('complementary', { name: 'Object details' });
    await details.getByRole('button', { name: 'Delete version' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Delete' }).click();
    const refusal = dialog.getByRole('alert');
    await expect.poll(() => refusal.textContent()).toContain('object lock');
    expect(await refusal.textContent()).toContain('AccessDenied');
    await shot('health-locked-delete');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    const versions = await s3.send(new ListObjectVersionsCommand({ Bucket: 'vault' }));
    expect(versions.Versions?.map((version) => version.Key)).toEqual(['contract.pdf']);
  });

  it('marks an object-lock bucket, offers no Suspend versioning on it, and shows retention, tags and Cache-Control', async () => {
    await go('buckets');
    const vault = page.getByRole('row').filter({ hasText: 'vault' });
    await vault.getByText('object lock').waitFor();
    expect(await vault.getByRole('button', { name: 'Suspend versioning' }).count()).toBe(0);
    expect(await page.getByRole('row').filter({ hasText: 'photos' }).getByText('object lock').count()).toBe(0);
    await go('browse/vault/');
    await page.getByRole('button', { name: 'contract.pdf', exact: true }).click();
    const details = page.getByRole('complementary', { name: 'Object details' });
    await expect.poll(() => details.getByTestId('object-lock').textContent()).toBe('legal hold');
    expect(await details.locator('.lock-line').textContent()).toBe('Locked: legal hold');
    await go('browse/photos/');
    await page.getByRole('button', { name: 'cat.jpg', exact: true }).click();
    await expect.poll(() => details.getByTestId('object-tags').textContent()).toBe('colour=blacksize=small');
    expect(await details.locator('dt', { hasText: 'cache-control' }).count()).toBe(1);
    expect(await details.getByText('max-age=60').count()).toBe(1);
    await shot('health-object-tags');
    await details.getByRole('button', { name: 'Close details' }).click();
  });

  it('keeps the page and page size in the address: a reload shows the same page', async () => {
    for (let start = 0; start < 120; start += 30) {
      await Promise.all(Array.from({ length: 30 }, (_, index) => s3.send(new PutObjectCommand({ Bucket: 'photos', Key: `many/item-${String(start + index).padStart(3, '0')}.txt`, Body: 'x' }))));
    }
    await go('browse/photos/many/');
    const pager = page.locator('.pager-below');
    await expect.poll(() => pager.textContent()).toContain('Items 1–100');
    await page.getByLabel('Page size').first().selectOption('50');
    await expect.poll(() => pager.textContent()).toContain('Items 1–50');
    await page.getByRole('button', { name: 'Next page' }).first().click();
    await expect.poll(() => pager.textContent()).toContain('Items 51–100');
    const address = new URL(page.url());
    expect(address.hash).toBe(`#/browse/photos/many/?after=${encodeURIComponent('many/item-049.txt')}&page=2&size=50`);
    await page.reload();
    await expect.poll(() => pager.textContent(), { timeout: 10_000 }).toContain('Items 51–100');
    await page.getByRole('button', { name: 'item-050.txt', exact: true }).waitFor();
    expect(await page.getByLabel('Page size').first().inputValue()).toBe('50');
    await page.getByRole('button', { name: 'Next page' }).first().click();
    await expect.poll(() => pager.textContent()).toContain('Items 101–120');
    await page.getByRole('button', { name: 'Previous page' }).first().click();
    await expect.poll(() => pager.textContent()).toContain('Items 51–100');
    await page.getByRole('button', { name: 'item-050.txt', exact: true }).waitFor();
  });

  it('says so when a folder cannot be listed, and offers no upload there', async () => {
    await go('browse/nosuchbucket/');
    await expect.poll(() => page.getByRole('alert').first().textContent()).toContain('NoSuchBucket');
    await expect.poll(() => page.locator('.pager-below').textContent()).toContain('the listing failed');
    expect(await page.getByText('Loading…').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Upload files' }).isDisabled()).toBe(true);
    expect(await page.locator('#upload-files-why').textContent()).toBe('This folder could not be listed.');
    expect(await page.getByRole('button', { name: 'Upload folder' }).count()).toBe(0);
  });

  it('disables rebalance and decommission on a single pool, with the reason', async () => {
    await go('operations');
    const start = page.getByRole('region', { name: 'Rebalance' }).getByRole('button', { name: 'Start' });
    await expect.poll(() => page.locator('#rebalance-start-why').textContent()).toBe('Rebalance needs more than one pool.');
    expect(await start.isDisabled()).toBe(true);
    expect(await start.getAttribute('aria-describedby')).toBe('rebalance-start-why');
    await expect.poll(() => page.locator('#decommission-start-why').textContent()).toBe('Decommission needs another pool to move the objects to.');
    expect(await page.getByRole('button', { name: 'Decommission selected' }).isDisabled()).toBe(true);
    expect(await page.getByLabel('Select pool 0').isDisabled()).toBe(true);
  });

  it('turns amber on every page when a drive goes offline and red when a set loses write quorum, with the runbook', async () => {
    await go('overview');
    await expect.poll(() => navMark('Overview').getAttribute('data-status')).toBe('ok');
    expect(await banner().count()).toBe(0);
    await setOffline('d3', true);
    try {
      await expect.poll(() => banner().getAttribute('data-status'), { timeout: 20_000 }).toBe('degraded');
      expect(await bannerColour()).toBe(amber);
      expect(await banner().textContent()).toContain('1 of 4 drive(s) offline');
      expect(await banner().textContent()).toContain('STANDARD write margin 0, read margin 1');
      expect(await banner().getByRole('link', { name: /Runbook: 4\. Replacing a drive/ }).getAttribute('href')).toBe('assets/runbooks.md');
      expect(await navMark('Overview').getAttribute('data-status')).toBe('degraded');
      expect(await navMark('Cluster').getAttribute('aria-label')).toBe('degraded');
      await expect.poll(() => page.locator('.stat', { hasText: 'Drives online' }).getAttribute('data-tone'), { timeout: 10_000 }).toBe('warn');
      // The cards follow the cluster snapshot, polled on its own (every 3 s).
      await expect.poll(() => page.locator('.stat', { hasText: 'Nodes' }).textContent(), { timeout: 10_000 }).toContain('with a drive offline');
      await shot('health-degraded');
      expect(await violations()).toEqual([]);
      for (const hash of ['buckets', 'browse/photos/', 'cluster', 'operations']) {
        await go(hash);
        await expect.poll(() => banner().getAttribute('data-status')).toBe('degraded');
      }
      const runbook = await fetch(`${running.consoleUrl}/svc/console/assets/runbooks.md`);
      expect(await runbook.text()).toContain('## 4. Replacing a drive');
      await setOffline('d4', true);
      await expect.poll(() => banner().getAttribute('data-status'), { timeout: 20_000 }).toBe('critical');
      expect(await bannerColour()).toBe(red);
      expect(await banner().getByRole('alert').textContent()).toContain('Quorum lost');
      expect(await banner().textContent()).toContain('pool 0 set 0 lost write quorum (some objects cannot be read)');
      expect(await navMark('Overview').getAttribute('data-status')).toBe('critical');
      await shot('health-critical');
      expect(await violations()).toEqual([]);
      await page.setViewportSize({ width: 390, height: 844 });
      await page.evaluate('window.scrollTo(0, 0)');
      expect((await page.evaluate('document.documentElement.scrollWidth')) as number).toBeLessThanOrEqual(390);
      await shot('health-critical-narrow');
      expect(await violations()).toEqual([]);
      await page.setViewportSize({ width: 1440, height: 900 });
    } finally {
      await setOffline('d4', false);
      await setOffline('d3', false);
    }
    await expect.poll(() => banner().count(), { timeout: 20_000 }).toBe(0);
    expect(await navMark('Overview').getAttribute('data-status')).toBe('ok');
  });

  it('speaks plainly: a taken name, an unknown page, read-repair counters, a share link to copy, an upload\'s speed and time left', async () => {
    await go('buckets');
    await page.getByLabel('New bucket name').fill('photos');
    await page.getByRole('button', { name: 'Create bucket' }).click();
    await expect.poll(() => page.locator('#bucket-error').textContent()).toBe('You already have a bucket named photos.');
    await go('nosuchpage');
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    expect(await page.getByText('AccessDenied').count()).toBe(0);
    await go('operations');
    const queue = page.getByText(/^Read-repair queue:/);
    await expect.poll(() => queue.textContent()).toContain('repaired: 0');
    expect(await queue.textContent()).not.toMatch(/gaveUp|awaitingDrives/);
    await go('browse/photos/');
    await page.getByRole('button', { name: 'cat.jpg', exact: true }).click();
    const details = page.getByRole('complementary', { name: 'Object details' });
    await details.getByRole('button', { name: 'Create share link' }).click();
    await details.getByRole('button', { name: 'Copy link' }).click();
    await details.getByRole('button', { name: 'Copied' }).waitFor();
    const copied = (await page.evaluate('navigator.clipboard.readText()')) as string;
    expect(copied).toBe(await details.getByLabel(/^Link \(expires/).inputValue());
    expect(copied).toContain('/photos/cat.jpg?');
    await details.getByRole('button', { name: 'Close details' }).click();
    // A slow link (about 2 MB/s up) so the upload runs long enough to show its pace.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 2_000_000 });
    try {
      await page.getByTestId('file-input').setInputFiles({ name: 'slow.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(6 * 1024 * 1024, 7) });
      const paceText = page.locator('li.upload', { hasText: 'slow.bin' }).locator('.upload-pace');
      await expect.poll(() => paceText.count(), { timeout: 15_000 }).toBe(1);
      expect(await paceText.textContent()).toMatch(/\/s · \d+ s left$/);
      await shot('health-upload-pace');
    } finally {
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    }
    await page.locator('li.upload[data-state="done"]', { hasText: 'slow.bin' }).waitFor({ timeout: 30_000 });
  });

  it('offers a readonly user no control its policies refuse, with the server\'s reason', async () => {
    const permissions = await (await signIn(running.consoleUrl, viewer)).call('GET', 'permissions?bucket=photos');
    expect(permissions.status).toBe(200);
    expect(permissions.body.actions.listObjects).toEqual({ allowed: true });
    expect(permissions.body.actions.putObject.allowed).toBe(false);
    expect(permissions.body.actions.putObject.reason).toBe('No policy allows user viewer s3:PutObject on arn:aws:s3:::photos/*.');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Access key').fill(viewer.accessKey);
    // Sign-out left no page in the address; a wrong secret puts the focus back on its field.
    expect(await page.evaluate('location.hash')).toBe('');
    await page.getByLabel('Secret key').fill('not-the-secret');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    await expect.poll(() => page.evaluate('document.activeElement?.getAttribute(\'name\')')).toBe('secretKey');
    await page.keyboard.type(viewer.secretKey);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Buckets', exact: true }).waitFor();
    // No cluster page, so no health banner or mark either.
    expect(await page.locator('.health-mark').count()).toBe(0);
    await expect.poll(() => page.locator('#create-bucket-why').textContent()).toContain('s3:CreateBucket');
    await page.getByLabel('New bucket name').fill('mine');
    expect(await page.getByRole('button', { name: 'Create bucket' }).isDisabled()).toBe(true);
    const photos = page.getByRole('row').filter({ hasText: 'photos' });
    await photos.getByText('read only').waitFor();
    expect(await page.getByRole('button', { name: /versioning/ }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Delete bucket/ }).count()).toBe(0);
    await shot('readonly-buckets');
    await go('browse/photos/');
    await page.getByRole('button', { name: 'cat.jpg', exact: true }).waitFor();
    await expect.poll(() => page.locator('#upload-files-why').textContent()).toContain('s3:PutObject on arn:aws:s3:::photos/*');
    expect(await page.getByRole('button', { name: 'Upload files' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Upload folder' }).count()).toBe(0);
    await page.getByLabel('Select cat.jpg').check();
    expect(await page.getByRole('button', { name: 'Delete (1)' }).isDisabled()).toBe(true);
    expect(await page.locator('#delete-selected-why').textContent()).toContain('s3:DeleteObject');
    await page.getByRole('button', { name: 'cat.jpg', exact: true }).click();
    const details = page.getByRole('complementary', { name: 'Object details' });
    await details.getByRole('link', { name: 'Download' }).waitFor();
    expect(await details.getByRole('button', { name: /Delete version|Remove marker/ }).count()).toBe(0);
    await shot('readonly-browser');
    expect(pageErrors).toEqual([]);
  });
});
