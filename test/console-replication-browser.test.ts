/**
 * A bucket's replication settings in Chromium, with two real svc deployments (the source serving
 * the console, the target a second process): a rule added from the form with the remote target
 * chosen from the bucket's list, edited, and a destination that is no target refused by S3's
 * parser beside the XML editor (nothing stored); GetBucketReplication reads back what the page
 * shows; the replication status shows the target's queue summed and per node, and Resync copies
 * an object written before the rule, its progress shown. A readonly user sees no control, only the
 * reasons, and the routes answer it 403 with nothing changed. axe finds no serious or critical
 * violation at 1440×900 and 390×844. Screenshots under test-output/console/replication-*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { GetBucketReplicationCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { repoRoot, s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { signIn, startConsoleServer, type ConsoleServer } from './helpers/console-client.js';
import { chromiumPresent, launchChromium, openConsolePage } from './helpers/chromium.js';
import { seriousViolations } from './helpers/axe.js';
import { addTarget, versionedBucket } from './helpers/replication.js';
import { waitFor } from './helpers/poll.js';

const haveChromium = chromiumPresent('the console replication browser test');
const shots = join(repoRoot, 'test-output/console');
const viewer = { accessKey: 'replication-viewer', secretKey: 'replication-viewer-secret' };
const wide = { width: 1440, height: 900 };
const narrow = { width: 390, height: 844 };

let rootA: string;
let rootB: string;
let running: ConsoleServer;
let target: SvcProcess;
let browser: Browser;
let s3: S3Client;
let arn: string;

const section = (page: Page, title: string) => page.getByRole('region', { name: title, exact: true });

async function openSettings(viewport: { width: number; height: number }, credentials?: { accessKey: string; secretKey: string }): Promise<Page> {
  const page = await openConsolePage(browser, running.consoleUrl, { viewport, hash: 'settings/src', ...(credentials ? { credentials } : {}) });
  await page.getByRole('heading', { name: 'Settings of src' }).waitFor();
  return page;
}

const storedRules = async () => (await s3.send(new GetBucketReplicationCommand({ Bucket: 'src' }))).ReplicationConfiguration?.Rules?.map((rule) => [rule.ID, rule.Priority, rule.Status, rule.DeleteMarkerReplication?.Status, rule.ExistingObjectReplication?.Status, rule.Destination?.Bucket]);

describe.skipIf(!haveChromium)("a bucket's replication settings and status", () => {
  beforeAll(async () => {
    rootA = await mkdtemp(join(tmpdir(), 'svc-console-repl-a-'));
    rootB = await mkdtemp(join(tmpdir(), 'svc-console-repl-b-'));
    await mkdir(shots, { recursive: true });
    [running, target] = await Promise.all([startConsoleServer([join(rootA, 'd{1...4}')]), startSvc({ args: [join(rootB, 'd{1...4}')] })]);
    s3 = s3ClientFor(running.server.url);
    await versionedBucket(running.server, 'src');
    await versionedBucket(target, 'dst');
    await s3.send(new PutObjectCommand({ Bucket: 'src', Key: 'before-the-rule.txt', Body: 'written before any rule' }));
    const added = await addTarget(running.server, 'src', target, 'dst');
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    arn = added.body.target.arn;
    const created = await (await signIn(running.consoleUrl)).call('POST', 'users', { body: { ...viewer, policies: ['readonly'] } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await Promise.all([running?.server.kill(), target?.kill()]);
    for (const root of [rootA, rootB]) if (root) await rm(root, { recursive: true, force: true });
  });

  it('adds and edits a rule from the form, shows S3\'s refusal of the XML, and resyncs with progress', async () => {
    const page = await openSettings(wide);
    const rules = section(page, 'Replication rules');
    await rules.getByText('No replication rules').waitFor();
    // The bucket's remote target is offered (by its bucket and endpoint, never with a secret).
    const destination = rules.locator('select[name="replication-destination"]');
    await expect.poll(() => destination.inputValue()).toBe(arn);
    expect(await destination.textContent()).toContain(`dst at ${target.url}`);
    await rules.getByLabel('Rule ID').fill('to-dr');
    // Without existing-object replication the rule starts no resync: the object written before it stays here until Resync.
    await rules.getByLabel('Replicate existing objects').uncheck();
    await rules.getByRole('button', { name: 'Add rule' }).click();
    await expect.poll(() => rules.getByRole('table', { name: 'Replication rules' }).textContent().catch(() => '')).toContain('to-dr');
    expect(await storedRules()).toEqual([['to-dr', 1, 'Enabled', 'Enabled', 'Disabled', arn]]);
    expect(await rules.getByRole('table', { name: 'Replication rules' }).textContent()).toContain(`dst at ${target.url}`);

    await rules.getByRole('button', { name: 'Edit rule to-dr' }).click();
    await rules.getByLabel('Priority').fill('2');
    await rules.getByLabel('Replicate delete markers').uncheck();
    await rules.getByRole('button', { name: 'Save rule' }).click();
    await expect.poll(storedRules).toEqual([['to-dr', 2, 'Enabled', 'Disabled', 'Disabled', arn]]);

    // A destination that is none of the bucket's targets: S3's parser refuses it beside the editor; nothing changes.
    // The section is drawn again once the saved rule is read back: open the editor in the section as drawn.
    const editor = rules.getByLabel('ReplicationConfiguration');
    await expect.poll(async () => (await editor.isVisible()) || (await rules.getByText('Edit the replication XML').click(), false), { timeout: 10_000 }).toBe(true);
    await editor.fill('<ReplicationConfiguration><Rule><ID>x</ID><Status>Enabled</Status><Destination><Bucket>arn:aws:s3:::nowhere</Bucket></Destination></Rule></ReplicationConfiguration>');
    await rules.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => rules.getByRole('alert').first().textContent()).toContain('InvalidArgument');
    expect(await storedRules()).toEqual([['to-dr', 2, 'Enabled', 'Disabled', 'Disabled', arn]]);
    await rules.screenshot({ path: join(shots, 'replication-rules-wide.png') });

    // The status: the target's queue summed and per node; Resync queues the object written before the rule.
    const status = section(page, 'Replication status');
    await status.getByRole('table', { name: 'Replication queues per node' }).waitFor();
    expect(await s3ClientFor(target.url).send(new HeadObjectCommand({ Bucket: 'dst', Key: 'before-the-rule.txt' })).then(() => 'there', () => 'absent')).toBe('absent');
    await status.getByRole('button', { name: 'Resync existing objects' }).click();
    await expect.poll(() => status.getByTestId('resync').first().textContent(), { timeout: 15_000 }).toMatch(/completed.*1 keys walked, 1 versions queued/);
    await waitFor('the object written before the rule reaches the target', () => s3ClientFor(target.url).send(new HeadObjectCommand({ Bucket: 'dst', Key: 'before-the-rule.txt' })), { timeoutMs: 15_000, intervalMs: 100 });
    const completed = status.getByRole('table', { name: 'Replication queues' }).locator('tbody tr td').nth(3);
    await expect.poll(() => completed.textContent(), { timeout: 10_000 }).toBe('1');
    await status.screenshot({ path: join(shots, 'replication-status-wide.png') });
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize(narrow);
    await rules.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, 'replication-narrow.png'), fullPage: true });
    expect(await seriousViolations(page)).toEqual([]);
    await page.context().close();
  }, 60_000);

  it('offers a readonly user no control, with the reasons, and the routes refuse it with nothing changed', async () => {
    const page = await openSettings(narrow, viewer);
    const rules = section(page, 'Replication rules');
    await rules.getByText('The rules are not shown').waitFor();
    await rules.getByText('You cannot change the rules').waitFor();
    const status = section(page, 'Replication status');
    await status.getByText('The replication status is not shown').waitFor();
    expect(await rules.getByRole('button').count()).toBe(0);
    expect(await status.getByRole('button').count()).toBe(0);
    expect(await rules.getByRole('textbox').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await status.screenshot({ path: join(shots, 'replication-readonly-narrow.png') });
    await page.context().close();

    const before = await storedRules();
    const session = await signIn(running.consoleUrl, viewer);
    const calls: { method: string; path: string; body?: unknown }[] = [
      { method: 'GET', path: 'buckets/src/settings/replication' },
      { method: 'PUT', path: 'buckets/src/settings/replication', body: { document: '<ReplicationConfiguration/>' } },
      { method: 'DELETE', path: 'buckets/src/settings/replication' },
      { method: 'GET', path: 'admin/v4/replication/target/list?bucket=src' },
      { method: 'GET', path: 'admin/v4/replication/status?bucket=src' },
      { method: 'POST', path: 'admin/v4/replication/resync?bucket=src' },
    ];
    for (const { method, path, body } of calls) {
      const answer = await session.call(method, path, body === undefined ? {} : { body });
      expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBe(403);
      expect(answer.body.Code).toBe('AccessDenied');
    }
    expect(await storedRules()).toEqual(before);
  }, 60_000);
});
