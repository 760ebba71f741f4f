/**
 * The sessions page, service-account editing and three layout fixes, in Chromium against a real
 * server. Sessions: the root's sessions on this node listed with this one marked, another ended
 * from the page (its cookie refused from then on), every other one ended; a readonly user sees
 * only its own and is refused every other principal's (listing and ending) with nothing ended.
 * Service accounts: an inline policy the server's parser refuses is shown beside the editor and
 * nothing is stored, a valid one and an expiry are stored, a past expiry is refused. Fixes: the
 * lifecycle XML editor stays open while a save from the form is read back; a bucket row's Delete
 * fits a 390 px screen; the object list counts a folder once per view, not on every page.
 * Screenshots under test-output/console/sessions-*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { CreateBucketCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { repoRoot, s3ClientFor } from './helpers/server-process.js';
import { signIn, startConsoleServer, type ConsoleServer, type ConsoleSession } from './helpers/console-client.js';
import { chromiumPresent, launchChromium, openConsolePage } from './helpers/chromium.js';
import { seriousViolations } from './helpers/axe.js';

const haveChromium = chromiumPresent('the console sessions browser test');
const shots = join(repoRoot, 'test-output/console');
const reader = { accessKey: 'sess-reader', secretKey: 'sess-reader-secret' };

let root: string;
let running: ConsoleServer;
let browser: Browser;
let s3: S3Client;
let rootSession: ConsoleSession;

function openPage(viewport: { width: number; height: number }, hash: string, credentials?: { accessKey: string; secretKey: string }): Promise<Page> {
  return openConsolePage(browser, running.consoleUrl, { viewport, hash, ...(credentials ? { credentials } : {}) });
}

describe.skipIf(!haveChromium)('sessions, service-account editing and layout fixes', () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-console-sessions-'));
    await mkdir(shots, { recursive: true });
    running = await startConsoleServer([join(root, 'd{1...4}')]);
    s3 = s3ClientFor(running.server.url);
    rootSession = await signIn(running.consoleUrl);
    expect((await rootSession.call('POST', 'users', { body: { ...reader, policies: ['readonly'] } })).status).toBe(200);
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await running?.server.kill();
    await rm(root, { recursive: true, force: true });
  });

  it("lists the root's sessions, ends another, then every other one", async () => {
    const other = await signIn(running.consoleUrl);
    const third = await signIn(running.consoleUrl);
    expect((await third.call('GET', 'buckets')).status).toBe(200);
    // The other session's handle: the one its own listing marks current.
    const otherHandle = ((await other.call('GET', 'sessions')).body.sessions as { handle: string; current: boolean }[]).find((session) => session.current)!.handle;
    const page = await openPage({ width: 1440, height: 900 }, 'sessions');
    const rows = page.getByRole('table', { name: 'Your sessions' }).locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(4);
    const current = page.getByRole('table', { name: 'Your sessions' }).locator('tr[data-current="true"]');
    expect(await current.count()).toBe(1);
    expect(await current.textContent()).toContain('this session');
    await page.screenshot({ path: join(shots, 'sessions-wide.png'), fullPage: true });
    expect(await seriousViolations(page)).toEqual([]);
    await page.locator(`tr[data-handle="${otherHandle}"]`).first().getByRole('button', { name: /^Sign out the session of/ }).click();
    await expect.poll(() => rows.count()).toBe(3);
    expect((await other.call('GET', 'buckets')).body.Code).toBe('ConsoleSignInRequired');
    expect((await third.call('GET', 'buckets')).status).toBe(200);
    await page.getByRole('button', { name: 'Sign out every other session' }).click();
    await expect.poll(() => rows.count()).toBe(1);
    for (const session of [third, rootSession]) expect((await session.call('GET', 'buckets')).status).toBe(401);
    rootSession = await signIn(running.consoleUrl);
    await page.context().close();
  });

  it("shows a readonly user only its own sessions and refuses anyone else's", async () => {
    const page = await openPage({ width: 390, height: 844 }, 'sessions', reader);
    const mine = page.getByRole('table', { name: 'Your sessions' });
    await expect.poll(() => mine.locator('tbody tr').count()).toBe(1);
    expect(await page.getByRole('table', { name: 'Every session' }).count()).toBe(0);
    await page.screenshot({ path: join(shots, 'sessions-readonly-narrow.png'), fullPage: true });
    expect(await seriousViolations(page)).toEqual([]);
    const session = await signIn(running.consoleUrl, reader);
    const all = await session.call('GET', 'sessions?all=true');
    expect([all.status, all.body.Code]).toEqual([403, 'AccessDenied']);
    const rootHandle = ((await rootSession.call('GET', 'sessions')).body.sessions as { handle: string; current: boolean }[]).find((entry) => entry.current)!.handle;
    const end = await session.call('DELETE', `sessions/${rootHandle}`);
    expect([end.status, end.body.Code]).toEqual([403, 'AccessDenied']);
    expect((await rootSession.call('GET', 'buckets')).status).toBe(200);
    // The root sees every principal's sessions, the reader's among them.
    const everyone = await rootSession.call('GET', 'sessions?all=true');
    expect((everyone.body.sessions as { accessKey: string }[]).filter((entry) => entry.accessKey === reader.accessKey).length).toBe(2);
    await page.context().close();
  });

  it("edits a service account's inline policy and expiry; the server's refusals are shown", async () => {
    const created = await rootSession.call('POST', 'admin/v4/iam/svcacct/add', { body: { parent: reader.accessKey, name: 'edited' } });
    const accessKey = created.body.serviceAccount.accessKey as string;
    const page = await openPage({ width: 1440, height: 900 }, 'service-accounts');
    await page.getByRole('button', { name: `Edit ${accessKey}` }).click();
    const dialog = page.getByRole('dialog');
    const editor = dialog.getByLabel(/^Inline policy/);
    await editor.fill(JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:Fly'], Resource: ['arn:aws:s3:::*'] }] }));
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => dialog.getByRole('alert').textContent()).toContain('MalformedPolicy');
    expect(await dialog.getByRole('alert').textContent()).toContain('s3:Fly');
    await page.screenshot({ path: join(shots, 'sessions-svcacct-refused-wide.png') });
    expect(await seriousViolations(page)).toEqual([]);
    expect((await rootSession.call('GET', `admin/v4/iam/svcacct/info?accessKey=${accessKey}`)).body.serviceAccount.policy).toBeUndefined();
    await dialog.getByLabel(/^Expires on/).fill('2001-01-01');
    await editor.fill(JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: ['arn:aws:s3:::photos/*'] }] }));
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => dialog.getByRole('alert').textContent()).toContain('InvalidArgument');
    const nextYear = new Date(Date.now() + 365 * 86_400_000).toISOString().slice(0, 10);
    await dialog.getByLabel(/^Expires on/).fill(nextYear);
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    const info = (await rootSession.call('GET', `admin/v4/iam/svcacct/info?accessKey=${accessKey}`)).body.serviceAccount;
    expect(info.policy.Statement[0].Action).toEqual(['s3:GetObject']);
    expect(new Date(info.expiresMs).toISOString().slice(0, 10)).toBe(nextYear);
    await page.context().close();
  });

  it('keeps the lifecycle XML editor open while a rule saved from the form is read back', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'rules' }));
    const page = await openPage({ width: 1440, height: 900 }, 'settings/rules');
    const lifecycle = page.getByRole('region', { name: 'Lifecycle rules' });
    await lifecycle.getByText('No lifecycle rules').waitFor();
    await lifecycle.getByText('Edit the lifecycle XML').click();
    const editor = lifecycle.getByLabel('LifecycleConfiguration');
    await editor.waitFor();
    await lifecycle.getByLabel('Rule name').fill('expire-tmp');
    await lifecycle.getByLabel(/^Prefix/).fill('tmp/');
    await lifecycle.getByLabel('Expire objects after (days)').fill('3');
    await lifecycle.getByRole('button', { name: 'Add rule' }).click();
    await expect.poll(() => lifecycle.getByRole('table', { name: 'Lifecycle rules' }).count()).toBe(1);
    await expect.poll(() => editor.inputValue()).toContain('expire-tmp');
    expect(await editor.isVisible()).toBe(true);
    await page.context().close();
  });

  it("fits a bucket row's Delete on a 390 px screen and counts a folder once per view", async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'phone-width-bucket' }));
    for (let index = 0; index < 60; index += 1) await s3.send(new PutObjectCommand({ Bucket: 'phone-width-bucket', Key: `k${String(index).padStart(3, '0')}`, Body: 'x' }));
    const page = await openPage({ width: 390, height: 844 }, 'buckets');
    const remove = page.getByRole('button', { name: 'Delete bucket phone-width-bucket' });
    await remove.waitFor();
    const box = (await remove.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(shots, 'sessions-buckets-narrow.png'), fullPage: true });

    const lists: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/api/buckets/phone-width-bucket/objects')) lists.push(new URL(request.url()).searchParams.get('count') ?? 'counted');
    });
    await page.goto(`${running.consoleUrl}/svc/console/#/browse/phone-width-bucket/?size=50`);
    await expect.poll(() => page.locator('.pager-below .pager-items').textContent()).toBe('Items 1–50 of 60');
    await page.locator('.pager-below').getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => page.locator('.pager-below .pager-items').textContent()).toBe('Items 51–60 of 60');
    // Counted on arrival; the next page (and any refresh) keeps that total.
    expect(lists[0]).toBe('counted');
    expect(lists.length).toBeGreaterThanOrEqual(2);
    expect(lists.slice(1).every((count) => count === 'false'), lists.join(' ')).toBe(true);
    await page.context().close();
  });
});
