/**
 * The Users page in a real browser (Debian's Chromium, headless, playwright-core) against a real
 * server: the root keys add a readonly user on the Users page, a policy with a mistake is refused
 * beside the editor with the validator's message, then the new user signs in, is offered only
 * its buckets, and sees its upload and delete refused with the reason. Screenshots under
 * test-output/console/ (users-*.png).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { CreateBucketCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { repoRoot, s3ClientFor, testCredentials } from './helpers/server-process.js';
import { startConsoleServer, type ConsoleServer } from './helpers/console-client.js';

const chromiumPath = '/usr/bin/chromium';
const haveChromium = existsSync(chromiumPath);
if (!haveChromium) {
  if (process.env.CI === 'true') throw new Error(`the console Users browser test needs Chromium at ${chromiumPath} (Debian package chromium); CI installs it`);
  console.warn(`skipping the console Users browser test: no Chromium at ${chromiumPath} (apt-get install chromium)`);
}

const shots = join(repoRoot, 'test-output/console');
let root: string;
let running: ConsoleServer;
let browser: Browser;
let page: Page;
let s3: S3Client;
const pageErrors: string[] = [];
const viewer = { accessKey: 'viewer', secretKey: 'viewer-secret-1' };

async function shot(name: string, fullPage = false): Promise<void> {
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage });
}

async function signInAs(accessKey: string, secretKey: string): Promise<void> {
  await page.goto(`${running.consoleUrl}/svc/console/`);
  await page.getByLabel('Access key').fill(accessKey);
  await page.getByLabel('Secret key').fill(secretKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

describe.skipIf(!haveChromium)('the Users page in Chromium', () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-console-users-ui-'));
    await mkdir(shots, { recursive: true });
    running = await startConsoleServer([join(root, 'd{1...4}')]);
    s3 = s3ClientFor(running.server.url);
    await s3.send(new CreateBucketCommand({ Bucket: 'photos' }));
    await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'cat.jpg', Body: 'meow' }));
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await running?.server.kill();
    await rm(root, { recursive: true, force: true });
  });

  it('adds a readonly user on the Users page', async () => {
    await signInAs(testCredentials.accessKeyId, testCredentials.secretAccessKey);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
    await page.getByText('No users yet').waitFor();
    await page.getByLabel('Access key').fill(viewer.accessKey);
    await page.getByLabel('Secret key').fill('short');
    await page.getByRole('button', { name: 'Add user' }).click();
    await expect.poll(() => page.locator('#user-error').textContent()).toContain('InvalidUserCredentials');
    await page.getByLabel('Secret key').fill(viewer.secretKey);
    await page.getByRole('button', { name: 'Add user' }).click();
    const row = page.getByRole('region', { name: /^Users \(/ }).getByRole('row').filter({ hasText: viewer.accessKey });
    await row.waitFor();
    expect(await row.textContent()).toContain('readonly');
    expect(await row.textContent()).toContain('enabled');
    await shot('users');
  });

  it('refuses a policy with a mistake beside the editor, with the validator\'s message, and saves a good one', async () => {
    await page.getByRole('button', { name: 'New policy' }).click();
    await page.getByLabel('Policy name').fill('photos-only');
    const broken = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: ['photos/*'] }] };
    await page.getByLabel(/Policy document/).fill(JSON.stringify(broken, null, 2));
    await page.getByRole('button', { name: 'Save policy' }).click();
    await expect.poll(() => page.locator('#policy-error').textContent()).toContain('resource "photos/*" is not arn:aws:s3:::<bucket>[/<key>]');
    expect(await page.locator('#policy-error').textContent()).toContain('MalformedPolicy');
    await shot('users-policy-error');
    const fixed = { ...broken, Statement: [{ ...broken.Statement[0], Resource: ['arn:aws:s3:::photos/*'] }] };
    await page.getByLabel(/Policy document/).fill(JSON.stringify(fixed, null, 2));
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByRole('region', { name: /^Policies/ }).getByRole('row').filter({ hasText: 'photos-only' }).waitFor();
    await shot('users-policies');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.evaluate('window.scrollTo(0, 0)');
    expect((await page.evaluate('document.documentElement.scrollWidth')) as number, 'the Users page scrolls sideways').toBeLessThanOrEqual(390);
    await shot('users-narrow', true);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('signs in as the new user, who is offered only its buckets and sees its upload and delete refused', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signInAs(viewer.accessKey, viewer.secretKey);
    await page.getByRole('heading', { name: 'Buckets', exact: true }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Pages' });
    expect(await nav.getByRole('link').allTextContents()).toEqual(['Buckets', 'Sessions']);
    expect(await page.locator('.who').textContent()).toContain('viewer · readonly');
    await page.getByRole('link', { name: 'photos', exact: true }).click();
    await page.getByRole('button', { name: 'cat.jpg', exact: true }).waitFor();

    // Upload and delete are refused before they are tried, with the server's reason beside them.
    await expect.poll(() => page.locator('#upload-files-why').textContent()).toBe('No policy allows user viewer s3:PutObject on arn:aws:s3:::photos/*.');
    expect(await page.getByRole('button', { name: 'Upload files' }).isDisabled()).toBe(true);
    await page.getByLabel('Select cat.jpg').check();
    expect(await page.getByRole('button', { name: 'Delete (1)' }).isDisabled()).toBe(true);
    expect(await page.locator('#delete-selected-why').textContent()).toContain('s3:DeleteObject');
    await shot('users-refused');
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'cat.jpg' }))).ContentLength).toBe(4);
    await expect(s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'dog.jpg' }))).rejects.toThrow();

    await page.goto(`${running.consoleUrl}/svc/console/#/users`);
    await page.getByRole('heading', { name: 'Not available' }).waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('Your policies do not open the users page');
    await shot('users-not-offered');
    expect(pageErrors).toEqual([]);
  });
});
