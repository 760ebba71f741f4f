/**
 * The KMS keys page in Chromium, against a real svc process with the built-in KMS: the keys
 * listed (root key without a Delete), a key deleted in two steps (the warning, then its name typed
 * again), from the keyboard on a phone; a key a bucket's default encryption names refused in the
 * dialog (`KMSKeyInUse`) and kept. A user who may list keys but not delete them sees no Delete,
 * only the reason, and the route refuses it anyway; a readonly user is not offered the page. axe
 * finds no serious or critical violation at 1440×900 and 390×844, dialogs included. Screenshots
 * under test-output/console/kms-*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { CreateBucketCommand, PutBucketEncryptionCommand } from '@aws-sdk/client-s3';
import { repoRoot, s3ClientFor } from './helpers/server-process.js';
import { signIn, startConsoleServer, type ConsoleServer, type ConsoleSession } from './helpers/console-client.js';
import { chromiumPresent, documentOverflow, launchChromium, openConsolePage, tabTo } from './helpers/chromium.js';
import { seriousViolations } from './helpers/axe.js';

const haveChromium = chromiumPresent('the console KMS browser test');
const shots = join(repoRoot, 'test-output/console');
const wide = { width: 1440, height: 900 };
const narrow = { width: 390, height: 844 };
const keyViewer = { accessKey: 'kms-viewer', secretKey: 'kms-viewer-secret' };
const reader = { accessKey: 'kms-reader', secretKey: 'kms-reader-secret' };

let root: string;
let running: ConsoleServer;
let browser: Browser;
let session: ConsoleSession;

const keyIds = async (): Promise<string[]> => ((await session.call('GET', 'admin/v4/kms/key/list')).body.keys as { keyId: string }[]).map((key) => key.keyId);

async function openKeys(viewport: { width: number; height: number }, credentials?: { accessKey: string; secretKey: string }): Promise<Page> {
  const page = await openConsolePage(browser, running.consoleUrl, { viewport, hash: 'kms', ...(credentials ? { credentials } : {}) });
  await page.getByRole('heading', { name: 'KMS keys' }).waitFor();
  await page.getByRole('table', { name: 'KMS keys' }).waitFor();
  return page;
}

describe.skipIf(!haveChromium)('the KMS keys page', () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-console-kms-'));
    await mkdir(shots, { recursive: true });
    running = await startConsoleServer([join(root, 'd{1...4}')], { SVC_KMS_SECRET_KEY: `svc-root:${randomBytes(32).toString('base64')}` }, { readyTimeoutMs: 120_000 });
    session = await signIn(running.consoleUrl);
    for (const key of ['old-backups', 'photos-key']) expect((await session.call('POST', `admin/v4/kms/key/create?key-id=${key}`)).status).toBe(200);
    const s3 = s3ClientFor(running.server.url);
    await s3.send(new CreateBucketCommand({ Bucket: 'photos' }));
    await s3.send(new PutBucketEncryptionCommand({ Bucket: 'photos', ServerSideEncryptionConfiguration: { Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: 'photos-key' } }] } }));
    const policy = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['admin:KMSKeyStatus'], Resource: ['arn:aws:s3:::*'] }] };
    expect((await session.call('PUT', 'policies/kms-status', { body: { document: JSON.stringify(policy) } })).status).toBe(200);
    expect((await session.call('POST', 'users', { body: { ...keyViewer, policies: ['kms-status'] } })).status).toBe(200);
    expect((await session.call('POST', 'users', { body: { ...reader, policies: ['readonly'] } })).status).toBe(200);
    browser = await launchChromium();
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await running?.server.kill();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('lists the keys and refuses, in the dialog, to delete one a bucket default names', async () => {
    const page = await openKeys(wide);
    const table = page.getByRole('table', { name: 'KMS keys' });
    await expect.poll(() => table.locator('tbody tr').count()).toBe(3);
    expect(await table.locator('tbody tr').first().textContent()).toContain('root key');
    expect(await page.getByRole('button', { name: 'Delete key svc-root' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Delete key photos-key' }).click();
    const warning = page.getByRole('dialog', { name: 'Delete the key photos-key?' });
    expect(await warning.textContent()).toContain('becomes unreadable');
    await warning.getByRole('button', { name: 'Continue' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete the key photos-key for good' });
    const button = confirm.getByRole('button', { name: 'Delete photos-key' });
    // The second step wants the key's name typed again.
    expect(await button.isDisabled()).toBe(true);
    await confirm.getByLabel('Type photos-key to confirm').fill('photos-ke');
    expect(await button.isDisabled()).toBe(true);
    await confirm.getByLabel('Type photos-key to confirm').fill('photos-key');
    await button.click();
    await expect.poll(() => confirm.getByRole('alert').textContent()).toContain('KMSKeyInUse');
    expect(await confirm.getByRole('alert').textContent()).toContain('photos');
    expect(await confirm.isVisible()).toBe(true);
    expect(await keyIds()).toEqual(['svc-root', 'old-backups', 'photos-key']);
    await page.screenshot({ path: join(shots, 'kms-in-use-wide.png') });
    expect(await seriousViolations(page)).toEqual([]);
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await page.context().close();
  }, 180_000);

  it('deletes a key in two steps from the keyboard on a phone', async () => {
    const page = await openKeys(narrow);
    await tabTo(page, page.getByRole('button', { name: 'Delete key old-backups' }));
    await page.keyboard.press('Enter');
    const warning = page.getByRole('dialog', { name: 'Delete the key old-backups?' });
    await tabTo(page, warning.getByRole('button', { name: 'Continue' }), 5);
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press('Enter');
    const confirm = page.getByRole('dialog', { name: 'Delete the key old-backups for good' });
    const typed = confirm.getByLabel('Type old-backups to confirm');
    await tabTo(page, typed, 5);
    await page.keyboard.type('old-backups');
    await page.screenshot({ path: join(shots, 'kms-delete-narrow.png') });
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Key old-backups was deleted.' }).waitFor();
    await expect.poll(() => page.getByRole('table', { name: 'KMS keys' }).locator('tbody tr').count()).toBe(2);
    expect(await keyIds()).toEqual(['svc-root', 'photos-key']);
    expect(await documentOverflow(page)).toBeLessThanOrEqual(0);
    expect(await seriousViolations(page)).toEqual([]);
    await page.context().close();
  }, 180_000);

  it('shows a user without admin:KMSDeleteKey no Delete, and the route refuses it; a readonly user is not offered the page', async () => {
    const page = await openKeys(narrow, keyViewer);
    await page.getByText('You cannot delete keys').waitFor();
    expect(await page.getByRole('table', { name: 'KMS keys' }).getByRole('button').count()).toBe(0);
    await page.screenshot({ path: join(shots, 'kms-viewer-narrow.png'), fullPage: true });
    expect(await seriousViolations(page)).toEqual([]);
    await page.context().close();
    const viewer = await signIn(running.consoleUrl, keyViewer);
    const refused = await viewer.call('POST', 'admin/v4/kms/key/delete?key-id=photos-key&force=true');
    expect([refused.status, refused.body.Code]).toEqual([403, 'AccessDenied']);
    expect(await keyIds()).toEqual(['svc-root', 'photos-key']);

    const readonly = await signIn(running.consoleUrl, reader);
    expect((await readonly.call('GET', 'session')).body.pages).not.toContain('kms');
    const listed = await readonly.call('GET', 'admin/v4/kms/key/list');
    expect([listed.status, listed.body.Code]).toEqual([403, 'AccessDenied']);
    expect((await session.call('GET', 'session')).body.pages).toContain('kms');
  }, 180_000);
});
