/**
 * A bucket's replication settings in Chromium, with two real svc deployments (the source serving
 * the console, the target a second process): a rule added from the form with the remote target
 * chosen from the bucket's list, edited, and a destination that is no target refused by S3's
 * parser beside the XML editor (nothing stored); GetBucketReplication reads back what the page
 * shows; the replication status shows the target's queue summed and per node, and Resync copies
 * an object written before the rule, its progress shown. A readonly user sees no control, only the
 * reasons, and the routes answer it 403 with nothing changed. Remote targets are added from the
 * page (a malformed endpoint and a wrong secret refused by name, the secret never shown again) and
 * removed (one a rule names refused in the dialog), from the keyboard on a phone; the resync's
 * progress bar counts what the target took, and the status is asked at most once a second. axe
 * finds no serious or critical violation at 1440×900 and 390×844. Screenshots under
 * test-output/console/replication-*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { GetBucketReplicationCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { repoRoot, s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { signIn, startConsoleServer, type ConsoleServer } from './helpers/console-client.js';
import { chromiumPresent, documentOverflow, launchChromium, openConsolePage, tabTo } from './helpers/chromium.js';
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

const listedTargets = async () => {
  const answer = await (await signIn(running.consoleUrl)).call('GET', 'admin/v4/replication/target/list?bucket=src');
  return (answer.body.targets as { targetBucket: string }[]).map((entry) => entry.targetBucket).sort();
};

const storedRules = async () => (await s3.send(new GetBucketReplicationCommand({ Bucket: 'src' }))).ReplicationConfiguration?.Rules?.map((rule) => [rule.ID, rule.Priority, rule.Status, rule.DeleteMarkerReplication?.Status, rule.ExistingObjectReplication?.Status, rule.Destination?.Bucket]);

describe.skipIf(!haveChromium)("a bucket's replication settings and status", () => {
  beforeAll(async () => {
    rootA = await mkdtemp(join(tmpdir(), 'svc-console-repl-a-'));
    rootB = await mkdtemp(join(tmpdir(), 'svc-console-repl-b-'));
    await mkdir(shots, { recursive: true });
    [running, target] = await Promise.all([startConsoleServer([join(rootA, 'd{1...4}')], {}, { readyTimeoutMs: 120_000 }), startSvc({ args: [join(rootB, 'd{1...4}')], readyTimeoutMs: 120_000 })]);
    s3 = s3ClientFor(running.server.url);
    await versionedBucket(running.server, 'src');
    await versionedBucket(target, 'dst');
    await versionedBucket(target, 'dst2');
    await s3.send(new PutObjectCommand({ Bucket: 'src', Key: 'before-the-rule.txt', Body: 'written before any rule' }));
    const added = await addTarget(running.server, 'src', target, 'dst');
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    arn = added.body.target.arn;
    const created = await (await signIn(running.consoleUrl)).call('POST', 'users', { body: { ...viewer, policies: ['readonly'] } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    browser = await launchChromium();
  }, 240_000);
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
    const statusAsked: number[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/api/admin/v4/replication/status')) statusAsked.push(Date.now());
    });
    await status.getByRole('button', { name: 'Resync existing objects' }).click();
    await expect.poll(() => status.getByTestId('resync').first().textContent(), { timeout: 15_000 }).toMatch(/completed.*1 keys walked, 1 versions queued, 1 replicated/);
    // The progress bar: everything the resync queued has reached the target.
    const bar = status.getByRole('progressbar', { name: /^Resync to dst at .*: 1 of 1 versions replicated$/ });
    expect(await bar.getAttribute('aria-valuenow')).toBe('100');
    await waitFor('the object written before the rule reaches the target', () => s3ClientFor(target.url).send(new HeadObjectCommand({ Bucket: 'dst', Key: 'before-the-rule.txt' })), { timeoutMs: 15_000, intervalMs: 100 });
    const completed = status.getByRole('table', { name: 'Replication queues' }).locator('tbody tr td').nth(3);
    await expect.poll(() => completed.textContent(), { timeout: 10_000 }).toBe('1');
    await status.screenshot({ path: join(shots, 'replication-status-wide.png') });
    // Polled, never more than once a second (the Resync button's own reload aside).
    const resyncAskedAt = statusAsked.length;
    await expect.poll(() => statusAsked.length - resyncAskedAt, { timeout: 15_000 }).toBeGreaterThanOrEqual(3);
    const gaps = statusAsked.slice(resyncAskedAt).flatMap((at, index, all) => (index === 0 ? [] : [at - all[index - 1]!]));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(900);
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize(narrow);
    await rules.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, 'replication-narrow.png'), fullPage: true });
    expect(await seriousViolations(page)).toEqual([]);
    await page.context().close();
  }, 180_000);

  it('adds a remote target from the page, refusing bad input by name, and never shows its secret again', async () => {
    const page = await openSettings(wide);
    const targets = section(page, 'Remote targets');
    await targets.getByRole('table', { name: 'Remote targets' }).waitFor();
    const form = targets.getByRole('form', { name: 'Add a remote target' });
    const secret = 'a-secret-typed-once-7c1f';
    await form.getByLabel('Endpoint').fill('ftp://elsewhere');
    await form.getByLabel('Target bucket').fill('dst2');
    await form.getByLabel('Access key').fill(testCredentials.accessKeyId);
    await form.getByLabel('Secret key').fill(secret);
    await form.getByRole('button', { name: 'Add target' }).click();
    await expect.poll(() => form.getByRole('alert').textContent()).toContain('InvalidArgument');
    expect(await form.getByRole('alert').textContent()).toContain('endpoint must be http(s)://host[:port]');
    // Refused or not, the secret does not stay in the page.
    expect(await form.getByLabel('Secret key').inputValue()).toBe('');
    await form.getByLabel('Endpoint').fill(target.url);
    await form.getByLabel('Secret key').fill(secret);
    await form.getByRole('button', { name: 'Add target' }).click();
    await expect.poll(() => form.getByRole('alert').textContent()).toContain('RemoteTargetCredentialsRefused');
    expect(await listedTargets()).toEqual(['dst']);
    expect(await form.getByLabel('Secret key').inputValue()).toBe('');

    await form.getByLabel('Secret key').fill(testCredentials.secretAccessKey);
    await form.getByRole('button', { name: 'Add target' }).click();
    await form.getByRole('status').filter({ hasText: `Target dst2 at ${target.url} added` }).waitFor();
    await expect.poll(() => targets.getByRole('table', { name: 'Remote targets' }).locator('tbody tr').count()).toBe(2);
    expect(await listedTargets()).toEqual(['dst', 'dst2']);
    for (const field of ['Endpoint', 'Target bucket', 'Access key', 'Secret key']) expect(await form.getByLabel(field).inputValue(), field).toBe('');
    const html = await page.content();
    expect(html).not.toContain(testCredentials.secretAccessKey);
    expect(html).not.toContain(secret);
    // The new target is offered as a rule's destination.
    expect(await section(page, 'Replication rules').locator('select[name="replication-destination"]').textContent()).toContain(`dst2 at ${target.url}`);
    await targets.screenshot({ path: join(shots, 'replication-targets-wide.png') });
    expect(await seriousViolations(page)).toEqual([]);
    await page.context().close();
  }, 180_000);

  it('removes a remote target from the keyboard on a phone; one a rule names is refused in the dialog', async () => {
    const page = await openSettings(narrow);
    const targets = section(page, 'Remote targets');
    await expect.poll(() => targets.getByRole('table', { name: 'Remote targets' }).locator('tbody tr').count(), { timeout: 30_000 }).toBe(2);
    await targets.getByRole('button', { name: `Remove target dst at ${target.url}` }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Remove target' }).click();
    await expect.poll(() => dialog.getByRole('alert').textContent()).toContain('RemoteTargetInUse');
    await page.screenshot({ path: join(shots, 'replication-target-in-use-narrow.png') });
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    expect(await listedTargets()).toEqual(['dst', 'dst2']);

    const remove = targets.getByRole('button', { name: `Remove target dst2 at ${target.url}` });
    await tabTo(page, remove, 600);
    await page.keyboard.press('Enter');
    await tabTo(page, page.getByRole('dialog').getByRole('button', { name: 'Remove target' }), 10);
    await page.keyboard.press('Enter');
    await expect.poll(() => targets.getByRole('table', { name: 'Remote targets' }).locator('tbody tr').count()).toBe(1);
    expect(await listedTargets()).toEqual(['dst']);
    expect(await documentOverflow(page)).toBeLessThanOrEqual(0);
    expect(await seriousViolations(page)).toEqual([]);
    await page.context().close();
  }, 180_000);

  it('offers a readonly user no control, with the reasons, and the routes refuse it with nothing changed', async () => {
    const page = await openSettings(narrow, viewer);
    const rules = section(page, 'Replication rules');
    await rules.getByText('The rules are not shown').waitFor();
    await rules.getByText('You cannot change the rules').waitFor();
    const status = section(page, 'Replication status');
    await status.getByText('The replication status is not shown').waitFor();
    const targets = section(page, 'Remote targets');
    await targets.getByText('The remote targets are not shown').waitFor();
    await targets.getByText('You cannot add or remove remote targets').waitFor();
    expect(await targets.getByRole('button').count()).toBe(0);
    expect(await targets.getByRole('textbox').count()).toBe(0);
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
      { method: 'POST', path: 'admin/v4/replication/target/add', body: { bucket: 'src', endpoint: target.url, targetBucket: 'dst2', accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey } },
      { method: 'POST', path: `admin/v4/replication/target/remove?bucket=src&arn=${encodeURIComponent(arn)}` },
    ];
    for (const { method, path, body } of calls) {
      const answer = await session.call(method, path, body === undefined ? {} : { body });
      expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBe(403);
      expect(answer.body.Code).toBe('AccessDenied');
    }
    expect(await storedRules()).toEqual(before);
    expect(await listedTargets()).toEqual(['dst']);
  }, 180_000);
});
