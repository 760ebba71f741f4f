/**
 * Data usage in the console, in Chromium against a real server (four drives, EC:2): after a scan
 * the Buckets page shows each bucket's objects, older versions, delete markers and sizes with the
 * scan's age, and Overview the totals; a readonly user (no admin:DataUsageInfo) sees the reason
 * instead of figures. Both widths (1440×900, 390×844), axe with no serious or critical violation,
 * and the bucket list reachable by keyboard. The metrics graphs on Overview (every node) and
 * Cluster (every node, and this node): five charts each, drawn once samples exist, each an image
 * named by its title with its now/peak/average in text. Screenshots under
 * test-output/console/usage-*.png and graphs-*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { CreateBucketCommand, DeleteObjectCommand, PutBucketVersioningCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { repoRoot, s3ClientFor } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { signIn, startConsoleServer, type ConsoleServer } from './helpers/console-client.js';
import { chromiumPresent, launchChromium, signInOnPage } from './helpers/chromium.js';
import { seriousViolations } from './helpers/axe.js';
import { waitFor } from './helpers/poll.js';

const haveChromium = chromiumPresent('the console data-usage browser test');
const shots = join(repoRoot, 'test-output/console');
const viewer = { accessKey: 'viewer', secretKey: 'viewer-secret-1' };
const widths = [
  { name: 'wide', width: 1440, height: 900 },
  { name: 'narrow', width: 390, height: 844 },
];

let root: string;
let running: ConsoleServer;
let browser: Browser;

const violations = seriousViolations;

async function scan(): Promise<void> {
  const url = running.server.url;
  const started = await waitFor('a data-usage scan to start', async () => {
    const answer = await admin(url, 'POST', '/svc/admin/v4/data-usage/scan');
    return answer.status === 200 ? answer.body.started.startedAt as string : undefined;
  }, { timeoutMs: 30_000, intervalMs: 100 });
  await waitFor('the scan to finish', async () => {
    const answer = await admin(url, 'GET', '/svc/admin/v4/data-usage');
    return answer.body.current === null && answer.body.last?.startedAt === started;
  }, { timeoutMs: 30_000, intervalMs: 50 });
}

async function newPage(size: { width: number; height: number }, credentials?: { accessKey: string; secretKey: string }): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: size.width, height: size.height } })).newPage();
  await signInOnPage(page, running.consoleUrl, credentials);
  return page;
}

describe.skipIf(!haveChromium)('the console shows data usage from the scanner and the last hour in graphs', () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-console-usage-'));
    await mkdir(shots, { recursive: true });
    running = await startConsoleServer([join(root, 'd{1...4}')]);
    // The first scheduled scan (soon after start) comes first, so none runs after the one below.
    await waitFor('the first scheduled scan', async () => (await admin(running.server.url, 'GET', '/svc/admin/v4/data-usage')).body.last !== null, { timeoutMs: 30_000, intervalMs: 100 });
    const s3 = s3ClientFor(running.server.url);
    await s3.send(new CreateBucketCommand({ Bucket: 'photos' }));
    await s3.send(new CreateBucketCommand({ Bucket: 'history' }));
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'history', VersioningConfiguration: { Status: 'Enabled' } }));
    for (let index = 0; index < 12; index += 1) await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: `2026/img-${index}.jpg`, Body: Buffer.alloc(100 * 1024) }));
    for (const body of ['v1', 'v2 v2', 'v3 v3 v3']) await s3.send(new PutObjectCommand({ Bucket: 'history', Key: 'notes.txt', Body: body }));
    await s3.send(new PutObjectCommand({ Bucket: 'history', Key: 'old.txt', Body: 'gone' }));
    await s3.send(new DeleteObjectCommand({ Bucket: 'history', Key: 'old.txt' }));
    await scan();
    // A bucket made after the scan: listed, with no figures yet.
    await s3.send(new CreateBucketCommand({ Bucket: 'newer' }));
    const rootSession = await signIn(running.consoleUrl);
    const created = await rootSession.call('POST', 'users', { body: { ...viewer, policies: ['readonly'] } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await running?.server.kill();
    await rm(root, { recursive: true, force: true });
  });

  for (const size of widths) {
    it(`shows per-bucket objects and sizes with the scan's age, and totals on Overview (${size.width}×${size.height})`, async () => {
      const page = await newPage(size);
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      const overview = page.locator('.stats');
      await expect.poll(() => overview.getByText('Objects', { exact: true }).count(), { timeout: 15_000 }).toBe(1);
      const objectsStat = overview.locator('.stat').filter({ hasText: 'Objects' });
      await expect.poll(() => objectsStat.locator('.stat-value').textContent(), { timeout: 15_000 }).toBe('13');
      expect(await objectsStat.locator('.stat-hint').textContent()).toBe('16 versions · 1 delete marker');
      expect(await overview.locator('.stat').filter({ hasText: 'Stored data' }).locator('.stat-value').textContent()).toBe('1.17 MiB');
      expect(await overview.locator('.stat').filter({ hasText: 'Buckets' }).locator('.stat-hint').textContent()).toMatch(/^scanned \d+ s ago$/);
      await page.screenshot({ path: join(shots, `usage-overview-${size.name}.png`), fullPage: true });

      await page.goto(`${running.consoleUrl}/svc/console/#/buckets`);
      const photos = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'photos', exact: true }) });
      await expect.poll(() => photos.locator('td.num').first().textContent(), { timeout: 15_000 }).toBe('12');
      expect(await photos.locator('td.num').nth(1).textContent()).toBe('1.17 MiB');
      const history = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'history', exact: true }) });
      expect(await history.locator('td.num').first().textContent()).toBe('1+3 older · 1 deleted');
      expect(await history.locator('td.num').nth(1).textContent()).toBe('8 B19 B with versions');
      const newer = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'newer', exact: true }) });
      expect(await newer.locator('td.num').first().textContent()).toBe('–');
      expect(await page.getByTestId('usage-age').textContent()).toMatch(/^Sizes and object counts from the data-usage scan that finished \d+ (s|min) ago\.$/);
      // Nothing sticks out sideways, on a phone either (the usage columns give way there).
      expect(await page.evaluate(() => { const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement; return root.scrollWidth <= root.clientWidth; })).toBe(true);
      await page.screenshot({ path: join(shots, `usage-buckets-${size.name}.png`), fullPage: true });
      expect(await violations(page)).toEqual([]);

      // The bucket links stay reachable by keyboard with the new columns.
      let reached = false;
      for (let step = 0; step < 40 && !reached; step += 1) {
        await page.keyboard.press('Tab');
        reached = await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { textContent: string | null } | null } }).document.activeElement?.textContent === 'history');
      }
      expect(reached).toBe(true);
      await page.keyboard.press('Enter');
      await expect.poll(() => page.url()).toContain('#/browse/history');
      expect(errors).toEqual([]);
      await page.context().close();
    });
  }

  for (const size of widths) {
    it(`draws the last hour's graphs on Overview and Cluster with text alternatives (${size.width}×${size.height})`, async () => {
      const page = await newPage(size);
      const s3 = s3ClientFor(running.server.url);
      // Requests the graphs can show: the first samples come at the next 10 s boundaries.
      const chart = page.getByTestId('chart-cluster-requests');
      await chart.waitFor();
      await waitFor('a sample with requests in the cluster history', async () => {
        await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'graph.txt', Body: 'x' }));
        const answer = await admin(running.server.url, 'GET', '/svc/admin/v4/metrics/history', 'scope=cluster');
        return (answer.body.samples as { requests: number }[]).some((sample) => sample.requests > 0);
      }, { timeoutMs: 40_000, intervalMs: 500 });
      await expect.poll(() => chart.locator('.chart-legend li').first().textContent(), { timeout: 15_000 }).toMatch(/^requests: now [\d.]+\/s, peak [\d.]+\/s, average [\d.]+\/s$/);
      expect(await chart.locator('path.chart-line').count()).toBeGreaterThan(0);
      const names = await page.locator('svg.chart-plot').evaluateAll((nodes) => nodes.map((node) => (node as unknown as { getAttribute(name: string): string | null }).getAttribute('aria-labelledby')));
      expect(names).toHaveLength(5);
      for (const title of ['Requests', 'Latency', 'Throughput', 'Drive I/O', 'Heal']) expect(await page.getByRole('img', { name: new RegExp(`^${title.replace('/', '\\/')}, last hour`) }).count()).toBe(1);
      // The latency chart draws from the same samples, once a sample holds a request that ended.
      await expect.poll(() => page.getByTestId('chart-cluster-latency').locator('.chart-legend li').first().textContent(), { timeout: 15_000 }).toMatch(/^p50: now /);
      await page.screenshot({ path: join(shots, `graphs-overview-${size.name}.png`), fullPage: true });
      expect(await violations(page)).toEqual([]);
      await page.goto(`${running.consoleUrl}/svc/console/#/cluster`);
      await page.getByTestId('chart-node-requests').waitFor();
      expect(await page.locator('svg.chart-plot').count()).toBe(10);
      await page.screenshot({ path: join(shots, `graphs-cluster-${size.name}.png`), fullPage: true });
      expect(await violations(page)).toEqual([]);
      await page.context().close();
    }, 90_000);
  }

  it('tells a user without admin:DataUsageInfo why no figures are shown', async () => {
    const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    await page.goto(`${running.consoleUrl}/svc/console/`);
    await page.getByLabel('Access key').fill(viewer.accessKey);
    await page.getByLabel('Secret key').fill(viewer.secretKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Buckets', exact: true }).waitFor();
    await page.getByRole('link', { name: 'photos', exact: true }).waitFor();
    const note = page.locator('.usage-age');
    await expect.poll(() => note.textContent(), { timeout: 15_000 }).toContain('Sizes and object counts are not shown:');
    expect(await note.textContent()).toContain('admin:DataUsageInfo');
    expect(await page.locator('th.num').count()).toBe(0);
    await page.screenshot({ path: join(shots, 'usage-readonly.png') });
    expect(await violations(page)).toEqual([]);
    await page.context().close();
  });
});
