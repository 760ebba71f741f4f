/**
 * The web console in a real browser (Debian's Chromium, headless, driven by playwright-core)
 * against a real server: sign-in, buckets, uploads (multipart and folders), prefix navigation,
 * download, delete, versions and delete markers, a heal, an object's placement and failure what-if, a drive taken offline by fault
 * injection, and a hostile key rendered as text. Every page is saved as a screenshot under
 * test-output/console/ (1280×800 and 390 px wide).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { HeadObjectCommand, ListBucketsCommand, ListMultipartUploadsCommand, type S3Client } from '@aws-sdk/client-s3';
import { repoRoot, s3ClientFor, testCredentials } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { startConsoleServer, type ConsoleServer } from './helpers/console-client.js';

const chromiumPath = '/usr/bin/chromium';
const haveChromium = existsSync(chromiumPath);
if (!haveChromium) {
  if (process.env.CI === 'true') throw new Error(`the console browser test needs Chromium at ${chromiumPath} (Debian package chromium); CI installs it`);
  console.warn(`skipping the console browser test: no Chromium at ${chromiumPath} (apt-get install chromium)`);
}

const shots = join(repoRoot, 'test-output/console');
const xssName = '<img src=x onerror=alert(1)>.txt';
let root: string;
let running: ConsoleServer;
let browser: Browser;
let page: Page;
let s3: S3Client;
const dialogs: string[] = [];
const pageErrors: string[] = [];
const bigFile = randomBytes(20 * 1024 * 1024);

async function shot(name: string, fullPage = false): Promise<void> {
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage });
}

async function go(hash: string): Promise<void> {
  await page.goto(`${running.consoleUrl}/svc/console/#/${hash}`);
}

describe.skipIf(!haveChromium)('the web console in Chromium', () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-console-ui-'));
    await mkdir(shots, { recursive: true });
    running = await startConsoleServer([join(root, 'd{1...4}')], { SVC_FAULT_INJECTION: 'on' });
    s3 = s3ClientFor(running.server.url);
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    page = await context.newPage();
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on('pageerror', (error) => pageErrors.push(error.message));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await running?.server.kill();
    await rm(root, { recursive: true, force: true });
  });

  it('refuses a wrong secret with a message, then signs in', async () => {
    await page.goto(`${running.consoleUrl}/`);
    expect(page.url()).toBe(`${running.consoleUrl}/svc/console/`);
    await page.getByLabel('Access key').fill(testCredentials.accessKeyId);
    await page.getByLabel('Secret key').fill('not-the-secret');
    await shot('signin');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('The access key or secret key is wrong.');
    // From the keyboard: type the secret and press Enter.
    await page.getByLabel('Secret key').focus();
    await page.keyboard.type(testCredentials.secretAccessKey);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByText('Usable capacity').waitFor();
    expect(await page.title()).toBe('Overview · svc console');
    await shot('overview');
  });

  it('creates a bucket, with a bad name refused beside the field', async () => {
    await go('buckets');
    await page.getByLabel('New bucket name').fill('Bad_Name');
    // The rule broken is shown as the name is typed, and Create waits until the name holds.
    await expect.poll(() => page.locator('#bucket-error').textContent()).toContain('lowercase');
    expect(await page.getByRole('button', { name: 'Create bucket' }).isDisabled()).toBe(true);
    await page.getByLabel('New bucket name').fill('photos');
    await page.getByRole('button', { name: 'Create bucket' }).click();
    await page.getByRole('link', { name: 'photos', exact: true }).waitFor();
    await shot('buckets');
  });

  it('uploads a 20 MiB file as multipart and a folder of files, navigates prefixes, downloads the same bytes', async () => {
    const bigPath = join(root, 'big.bin');
    await writeFile(bigPath, bigFile);
    const folder = join(root, 'upload', 'album');
    await mkdir(join(folder, 'inner'), { recursive: true });
    await writeFile(join(folder, 'one.txt'), 'one');
    await writeFile(join(folder, 'two.txt'), 'two');
    await writeFile(join(folder, 'inner', 'three.txt'), 'three');
    await page.getByRole('link', { name: 'photos', exact: true }).click();
    await page.getByText('This folder is empty').waitFor();
    await page.getByTestId('file-input').setInputFiles(bigPath);
    await page.getByText('multipart').waitFor();
    await page.locator('li.upload[data-state="done"]').first().waitFor({ timeout: 60_000 });
    await page.getByTestId('folder-input').setInputFiles(folder);
    await expect.poll(() => page.locator('li.upload[data-state="done"]').count(), { timeout: 30_000 }).toBe(4);
    await shot('browser-uploads');
    await page.getByRole('link', { name: 'album/' }).click();
    await page.getByRole('link', { name: 'inner/' }).click();
    await page.getByRole('button', { name: 'three.txt' }).waitFor();
    await expect.poll(() => page.locator('.breadcrumbs').textContent()).toBe('Buckets/photos/album/inner');
    await page.locator('.breadcrumbs').getByRole('link', { name: 'photos', exact: true }).click();
    await page.getByRole('button', { name: 'big.bin' }).waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('row', { name: /big\.bin/ }).getByRole('link', { name: 'Download' }).click()]);
    expect(download.suggestedFilename()).toBe('big.bin');
    const saved = join(root, 'downloaded.bin');
    await download.saveAs(saved);
    expect((await readFile(saved)).equals(bigFile)).toBe(true);
  });

  it('shows a hostile key as text and runs nothing, then deletes it', async () => {
    await page.getByTestId('file-input').setInputFiles({ name: xssName, mimeType: 'text/plain', buffer: Buffer.from('harmless') });
    const name = page.getByRole('button', { name: xssName, exact: true });
    await name.waitFor();
    expect(await name.textContent()).toBe(xssName);
    expect(await page.locator('table img').count()).toBe(0);
    await name.click();
    const key = page.getByRole('complementary', { name: 'Object details' }).locator('dd.mono').first();
    await key.waitFor();
    expect(await key.textContent()).toBe(xssName);
    await shot('object-details');
    expect(dialogs).toEqual([]);
    await page.getByRole('button', { name: 'Close details' }).click();
    await page.getByLabel(`Select ${xssName}`).check();
    await page.getByRole('button', { name: 'Delete (1)' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => page.getByRole('button', { name: xssName, exact: true }).count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it('turns versioning on and shows versions and delete markers', async () => {
    await go('buckets');
    await page.getByRole('button', { name: 'Enable versioning' }).click();
    await page.getByText('enabled', { exact: true }).waitFor();
    await go('browse/photos/');
    for (const text of ['first', 'second']) {
      await page.getByTestId('file-input').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from(text) });
      await expect.poll(() => page.locator('li.upload[data-state="done"]', { hasText: 'notes.txt' }).count()).toBeGreaterThan(text === 'first' ? 0 : 1);
    }
    await page.getByLabel('Select notes.txt').check();
    await page.getByRole('button', { name: 'Delete (1)' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'notes.txt', exact: true }).count()).toBe(0);
    await page.getByLabel('Show deleted').check();
    await page.getByRole('button', { name: 'notes.txt', exact: true }).click();
    const details = page.getByRole('complementary', { name: 'Object details' });
    await details.getByText('Versions (3)').waitFor();
    expect(await details.locator('li.version[data-delete-marker="true"]').count()).toBe(1);
    expect(await details.locator('li.version[data-delete-marker="false"]').count()).toBe(2);
    await shot('versions');
  });

  it('starts a heal and watches it finish, with each repaired object\'s drives before and after', async () => {
    // One drive loses the bucket's directory (every shard and xl.meta of its objects on that drive).
    await rm(join(root, 'd2', 'photos'), { recursive: true, force: true });
    await go('operations');
    await page.getByLabel('Bucket (empty: everything)').fill('photos');
    await page.getByLabel('Scan mode').selectOption('deep');
    await page.getByRole('button', { name: 'Start heal' }).click();
    await page.locator('.heal-status[data-status="finished"]').waitFor({ timeout: 30_000 });
    const status = await page.locator('.heal-status').textContent();
    expect(status).toMatch(/[1-9]\d* scanned · [1-9]\d* healed/);
    expect(status).toContain(`${join(root, 'd2')}: missing → ok`);
    expect(await page.locator('.heal-status .badge', { hasText: 'healed' }).count()).toBeGreaterThan(0);
    await shot('operations');
  });

  it('shows a drive taken offline on the cluster page within 10 s', async () => {
    await go('cluster');
    const drive = join(root, 'd3');
    await page.locator(`.drive[data-endpoint="${drive}"][data-state="online"]`).waitFor();
    const answer = await admin(running.server.url, 'POST', '/svc/admin/v4/faults', `drive=${encodeURIComponent(drive)}`, { body: JSON.stringify({ offline: true }) });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const started = Date.now();
    await page.locator(`.drive[data-endpoint="${drive}"][data-state="offline"]`).waitFor({ timeout: 10_000 });
    expect(Date.now() - started).toBeLessThan(10_000);
    await shot('cluster');
    await go('overview');
    await page.getByText('1 offline · 0 healing').waitFor();
    await admin(running.server.url, 'POST', '/svc/admin/v4/faults', `drive=${encodeURIComponent(drive)}`, { body: JSON.stringify({}) });
  });

  it('cancels an upload in flight: nothing is stored and no upload is left behind', async () => {
    await go('browse/photos/');
    await page.getByRole('button', { name: 'big.bin' }).waitFor();
    // A slow link (about 4 MB/s up) so that the upload is still running when Cancel is pressed.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 4_000_000 });
    // Given as a file on disk: a 24 MiB buffer would cross the browser protocol as base64, which takes seconds.
    const folder = await mkdtemp(join(tmpdir(), 'svc-console-slow-'));
    const slowFile = join(folder, 'slow.bin');
    await writeFile(slowFile, randomBytes(24 * 1024 * 1024));
    try {
      await page.getByTestId('file-input').setInputFiles(slowFile);
      const row = page.locator('li.upload', { hasText: 'slow.bin' });
      await page.locator('li.upload[data-state="uploading"]', { hasText: 'slow.bin' }).waitFor();
      await expect.poll(async () => Number(await row.getByRole('progressbar').getAttribute('aria-valuenow')), { timeout: 20_000 }).toBeGreaterThan(0);
      await page.getByRole('button', { name: 'Cancel upload of slow.bin' }).click();
      // The link at full speed again: the abort of the upload (a DELETE) must not queue behind throttled bytes.
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
      await page.locator('li.upload[data-state="canceled"]', { hasText: 'slow.bin' }).waitFor();
    } finally {
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
      await rm(folder, { recursive: true, force: true });
    }
    await expect.poll(async () => (await s3.send(new ListMultipartUploadsCommand({ Bucket: 'photos' }))).Uploads ?? []).toEqual([]);
    await expect(s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'slow.bin' }))).rejects.toThrow();
  });

  it('deletes a bucket that holds objects only after its name is typed', async () => {
    await go('buckets');
    await page.getByLabel('New bucket name').fill('scratch');
    await page.getByRole('button', { name: 'Create bucket' }).click();
    await page.getByRole('link', { name: 'scratch', exact: true }).click();
    await page.getByTestId('file-input').setInputFiles({ name: 'keep.txt', mimeType: 'text/plain', buffer: Buffer.from('keep') });
    await page.locator('li.upload[data-state="done"]', { hasText: 'keep.txt' }).waitFor();
    await go('buckets');
    await page.getByRole('button', { name: 'Delete bucket scratch' }).click();
    const dialog = page.getByRole('dialog');
    // One dialog: the bucket is seen to hold objects, so its name is asked for at once.
    await dialog.getByText('is not empty').waitFor();
    const confirm = dialog.getByRole('button', { name: 'Delete bucket and contents' });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel(/Type .* to confirm/).fill('scratch');
    await shot('delete-bucket');
    await confirm.click();
    await expect.poll(() => page.getByRole('link', { name: 'scratch', exact: true }).count()).toBe(0);
    expect(((await s3.send(new ListBucketsCommand({}))).Buckets ?? []).map((bucket) => bucket.Name)).toEqual(['photos']);
  });

  it('explores an object on four drives at EC:2: failed drives flip its verdicts at the quorums, the planner names a rejection\'s rule', async () => {
    await go('browse/photos/');
    await page.getByRole('button', { name: 'big.bin' }).click();
    await page.getByRole('complementary', { name: 'Object details' }).getByRole('link', { name: 'Show placement' }).click();
    await page.getByRole('heading', { name: 'Explorer' }).waitFor();
    const grid = page.getByRole('group', { name: 'Drives of set 0' });
    await expect.poll(() => grid.getByRole('button').count()).toBe(4);
    expect(await grid.locator('.shard.data').count()).toBe(2);
    expect(await grid.locator('.shard.parity').count()).toBe(2);
    const verdict = (name: string) => page.locator(`.fate-row[data-verdict="${name}"]`).getAttribute('data-value');
    const verdicts = async () => [await verdict('readable'), await verdict('writable'), await verdict('deletable')];
    await expect.poll(verdicts).toEqual(['true', 'true', 'true']);
    await expect.poll(() => page.getByTestId('object-fate').textContent()).toContain('K = M, so K + 1 = 3');
    const drives = grid.getByRole('button');
    // The first by pointer, the second from the keyboard (Space on the focused drive button).
    await drives.nth(0).click();
    await expect.poll(verdicts).toEqual(['true', 'true', 'true']);
    await drives.nth(1).focus();
    await page.keyboard.press('Space');
    await expect.poll(verdicts).toEqual(['true', 'false', 'false']);
    expect(await page.getByTestId('object-fate').textContent()).toContain('0 more failure(s) tolerated');
    expect(await drives.nth(1).getAttribute('aria-pressed')).toBe('true');
    await page.getByLabel('Launch patterns (space separated)').fill('/data/d{1...17}');
    await page.getByRole('button', { name: 'Plan', exact: true }).click();
    await expect.poll(() => page.getByTestId('plan-answer').textContent()).toContain('no-valid-set-width');
    await page.evaluate('window.scrollTo(0, 0)');
    await shot('explorer', true);
    await drives.nth(2).click();
    await expect.poll(verdicts).toEqual(['false', 'false', 'false']);
    await drives.nth(2).click();
    await expect.poll(verdicts).toEqual(['true', 'false', 'false']);
    await page.getByRole('button', { name: 'Fail node local' }).click();
    await expect.poll(verdicts).toEqual(['false', 'false', 'false']);
    await page.getByRole('button', { name: 'Clear failures' }).click();
    await expect.poll(verdicts).toEqual(['true', 'true', 'true']);
    await page.getByLabel('Launch patterns (space separated)').fill('http://h{1...2}:9000/d{1...4}');
    await page.getByLabel('Drive size (optional)').fill('1TiB');
    await page.getByRole('button', { name: 'Plan', exact: true }).click();
    await expect.poll(() => page.getByTestId('plan-answer').getAttribute('data-accepted')).toBe('true');
    expect(await page.getByTestId('plan-answer').textContent()).toContain('8 drive(s) on 2 host(s): 1 set(s) of 8');
  });

  it('reads at a 390 px wide viewport, and signs out', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [hash, name] of [['overview', 'narrow-overview'], ['browse/photos/', 'narrow-browser'], ['cluster', 'narrow-cluster'], ['explorer/photos/big.bin', 'narrow-explorer']] as const) {
      await go(hash);
      await page.locator('h1').first().waitFor();
      await page.waitForTimeout(500);
      const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      expect(width, `${hash} scrolls sideways`).toBeLessThanOrEqual(390);
      await shot(name);
    }
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Buckets' }).click();
    await page.getByRole('heading', { name: 'Buckets', exact: true }).waitFor();
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    expect(pageErrors).toEqual([]);
  });
});
