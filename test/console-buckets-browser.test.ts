/**
 * The object list and the bucket list in Chromium, at 1440×900 and 390×844, against a real server:
 * the list's total, its sort orders (name, size, date) and its filter are kept in the address (a
 * reload shows the same view), with a pager above and below; Create bucket is disabled with the
 * broken naming rule as the name is typed, and object lock can be chosen at creation; a bucket
 * holding only older versions and delete markers is deleted in one confirmed step that says what
 * it removes. Screenshots under test-output/console/ (list-*.png, buckets-*.png).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { CreateBucketCommand, DeleteObjectCommand, GetObjectLockConfigurationCommand, HeadBucketCommand, PutBucketVersioningCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { repoRoot, s3ClientFor } from './helpers/server-process.js';
import { startConsoleServer, type ConsoleServer } from './helpers/console-client.js';
import { chromiumPresent, launchChromium, signInOnPage } from './helpers/chromium.js';

const haveChromium = chromiumPresent('the console list and buckets browser test');
const shots = join(repoRoot, 'test-output/console');
const widths = [
  { name: 'wide', width: 1440, height: 900 },
  { name: 'narrow', width: 390, height: 844 },
];

let root: string;
let running: ConsoleServer;
let browser: Browser;
let s3: S3Client;

async function openPage(viewport: { width: number; height: number }): Promise<Page> {
  const page = await (await browser.newContext({ viewport })).newPage();
  await signInOnPage(page, running.consoleUrl);
  return page;
}

const go = (page: Page, hash: string) => page.goto(`${running.consoleUrl}/svc/console/#/${hash}`);
const objectNames = (page: Page) => page.locator('table.objects tbody button.name').allTextContents();

describe.skipIf(!haveChromium)('the object list and bucket list in the browser', () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-console-buckets-'));
    await mkdir(shots, { recursive: true });
    running = await startConsoleServer([join(root, 'd{1...4}')]);
    s3 = s3ClientFor(running.server.url);
    await s3.send(new CreateBucketCommand({ Bucket: 'shelf' }));
    for (let start = 0; start < 120; start += 30) {
      await Promise.all(Array.from({ length: 30 }, (_, index) => s3.send(new PutObjectCommand({ Bucket: 'shelf', Key: `many/item-${String(start + index).padStart(3, '0')}.txt`, Body: 'x' }))));
    }
    await s3.send(new PutObjectCommand({ Bucket: 'shelf', Key: 'many/big.bin', Body: 'b'.repeat(5000) }));
    await s3.send(new PutObjectCommand({ Bucket: 'shelf', Key: 'many/mid.bin', Body: 'm'.repeat(2000) }));
    await s3.send(new PutObjectCommand({ Bucket: 'shelf', Key: 'many/sub/inner.txt', Body: 'i' }));
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await running?.server.kill();
    await rm(root, { recursive: true, force: true });
  });

  for (const viewport of widths) {
    it(`shows the total, sorts by size and keeps sort, page and filter in the address (${viewport.name})`, async () => {
      const page = await openPage(viewport);
      await go(page, 'browse/shelf/many/');
      const above = page.locator('.pager-above');
      const below = page.locator('.pager-below');
      // 120 items, big.bin, mid.bin and the folder sub/: 123 entries.
      await expect.poll(() => above.textContent(), { timeout: 15_000 }).toContain('Items 1–100 of 123');
      expect(await below.textContent()).toContain('Items 1–100 of 123');
      expect((await objectNames(page))[0]).toBe('big.bin');
      await page.getByLabel('Sort by').selectOption('size:desc');
      await expect.poll(async () => (await objectNames(page)).slice(0, 2)).toEqual(['big.bin', 'mid.bin']);
      expect(new URL(page.url()).hash).toBe('#/browse/shelf/many/?sort=size&order=desc');
      // The folder stays first in every order.
      expect(await page.locator('table.objects tbody a.folder').first().textContent()).toBe('sub/');
      await page.screenshot({ path: join(shots, `list-sorted-${viewport.name}.png`) });
      await below.getByRole('button', { name: 'Next page' }).click();
      await expect.poll(() => above.textContent()).toContain('Items 101–123 of 123');
      expect(new URL(page.url()).hash).toBe('#/browse/shelf/many/?page=2&sort=size&order=desc');
      await page.reload();
      await expect.poll(() => below.textContent()).toContain('Items 101–123 of 123');
      expect(await page.getByLabel('Sort by').inputValue()).toBe('size:desc');
      await above.getByRole('button', { name: 'Previous page' }).click();
      await expect.poll(async () => (await objectNames(page)).slice(0, 2)).toEqual(['big.bin', 'mid.bin']);
      // The name column's header sorts too, and says its order to screen readers.
      await page.getByRole('button', { name: 'Name', exact: true }).click();
      await expect.poll(() => page.getByRole('columnheader', { name: 'Name' }).getAttribute('aria-sort')).toBe('ascending');
      await page.getByRole('button', { name: 'Name', exact: true }).click();
      await expect.poll(() => page.getByRole('columnheader', { name: 'Name' }).getAttribute('aria-sort')).toBe('descending');
      await expect.poll(async () => (await objectNames(page))[0]).toBe('mid.bin');
      // The filter is in the address too.
      await go(page, 'browse/shelf/many/');
      await page.getByLabel('Filter by prefix').fill('item-01');
      await expect.poll(() => above.textContent()).toContain('Items 1–10 of 10');
      expect(new URL(page.url()).hash).toBe('#/browse/shelf/many/?filter=item-01');
      await page.reload();
      await expect.poll(() => above.textContent()).toContain('Items 1–10 of 10');
      expect(await page.getByLabel('Filter by prefix').inputValue()).toBe('item-01');
      await page.screenshot({ path: join(shots, `list-filtered-${viewport.name}.png`), fullPage: true });
      await page.context().close();
    });
  }

  it('disables Create bucket with the broken naming rule as the name is typed, and creates an object-lock bucket', async () => {
    const page = await openPage(widths[0]!);
    await go(page, 'buckets');
    const name = page.getByLabel('New bucket name');
    const create = page.getByRole('button', { name: 'Create bucket' });
    await name.fill('Bad_Name');
    await expect.poll(() => page.locator('#bucket-error').textContent()).toBe('Bucket names use only lowercase letters, digits, dots and hyphens.');
    expect(await create.isDisabled()).toBe(true);
    await name.fill('a.-b');
    await expect.poll(() => page.locator('#bucket-error').textContent()).toBe('Bucket names have no dot next to a hyphen.');
    expect(await create.isDisabled()).toBe(true);
    await page.screenshot({ path: join(shots, 'buckets-invalid-name-wide.png') });
    await name.fill('ledger-2026');
    await expect.poll(() => create.isDisabled()).toBe(false);
    expect(await page.locator('#bucket-error').count()).toBe(0);
    await page.getByLabel('Object lock').check();
    await create.click();
    await page.getByRole('row').filter({ hasText: 'ledger-2026' }).getByText('object lock').waitFor();
    const lock = await s3.send(new GetObjectLockConfigurationCommand({ Bucket: 'ledger-2026' }));
    expect(lock.ObjectLockConfiguration?.ObjectLockEnabled).toBe('Enabled');
    await page.context().close();
  });

  for (const viewport of widths) {
    it(`deletes a bucket holding only an older version and a delete marker in one confirmed step (${viewport.name})`, async () => {
      const bucket = `ghosts-${viewport.name}`;
      await s3.send(new CreateBucketCommand({ Bucket: bucket }));
      await s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'gone.txt', Body: 'was here' }));
      await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'gone.txt' }));
      const page = await openPage(viewport);
      await go(page, 'buckets');
      await page.getByRole('button', { name: `Delete bucket ${bucket}` }).click();
      const dialog = page.getByRole('dialog');
      await expect.poll(() => dialog.getByTestId('bucket-contents').textContent()).toBe('0 objects1 older version1 delete marker0 unfinished uploads');
      expect(await dialog.getByRole('heading').textContent()).toBe('Delete the bucket and everything in it?');
      await page.screenshot({ path: join(shots, `buckets-delete-versions-${viewport.name}.png`) });
      await dialog.getByLabel(/Type .* to confirm/).fill(bucket);
      await dialog.getByRole('button', { name: 'Delete bucket and contents' }).click();
      await page.getByRole('dialog').waitFor({ state: 'detached' });
      await expect.poll(() => s3.send(new HeadBucketCommand({ Bucket: bucket })).then(() => 'exists', (error: { name?: string }) => error.name)).toBe('NotFound');
      await page.context().close();
    });
  }
});
