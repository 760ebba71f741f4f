/**
 * The Groups and Service accounts pages in Chromium against a real server, at 1440×900 and
 * 390×844: a group created with its first member, a policy attached (read back through the admin
 * API), the member taken out and the empty group removed; a service account created for a user
 * shows its secret once (the keys then sign S3 requests), never again after the dialog closes, and
 * the secret is in no log line; a readonly user is offered neither page and its calls are refused
 * with nothing changed; axe finds no serious or critical violation on the pages and the dialog.
 * Screenshots under test-output/console/iam-*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { repoRoot } from './helpers/server-process.js';
import { signIn, startConsoleServer, type ConsoleServer, type ConsoleSession } from './helpers/console-client.js';
import { chromiumPresent, launchChromium, signInOnPage } from './helpers/chromium.js';

const haveChromium = chromiumPresent('the console groups and service accounts browser test');
const shots = join(repoRoot, 'test-output/console');
const widths = [
  { name: 'wide', width: 1440, height: 900 },
  { name: 'narrow', width: 390, height: 844 },
];
const reader = { accessKey: 'iam-reader', secretKey: 'iam-reader-secret' };

let root: string;
let running: ConsoleServer;
let browser: Browser;
let rootSession: ConsoleSession;

async function violations(page: Page): Promise<string[]> {
  const { AxeBuilder } = await import('@axe-core/playwright');
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return result.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).slice(0, 3).join(', ')}`);
}

async function openPage(viewport: { width: number; height: number }, hash: string, heading: string): Promise<Page> {
  const page = await (await browser.newContext({ viewport })).newPage();
  await signInOnPage(page, running.consoleUrl);
  await page.goto(`${running.consoleUrl}/svc/console/#/${hash}`);
  await page.getByRole('heading', { name: heading, exact: true, level: 1 }).waitFor();
  return page;
}

describe.skipIf(!haveChromium)('the Groups and Service accounts pages', () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-console-iam-'));
    await mkdir(shots, { recursive: true });
    running = await startConsoleServer([join(root, 'd{1...4}')]);
    rootSession = await signIn(running.consoleUrl);
    for (const user of [{ accessKey: 'alice', secretKey: 'alice-secret-1' }, { accessKey: 'bob', secretKey: 'bob-secret-12' }, reader]) {
      const created = await rootSession.call('POST', 'users', { body: { ...user, policies: ['readonly'] } });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
    }
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await running?.server.kill();
    await rm(root, { recursive: true, force: true });
  });

  for (const viewport of widths) {
    it(`creates a group, attaches a policy, takes the member out and removes it (${viewport.name})`, async () => {
      const group = `staff-${viewport.name}`;
      const page = await openPage(viewport, 'groups', 'Groups');
      await page.getByLabel('Group name').fill(group);
      await page.getByLabel('First member').selectOption('alice');
      await page.getByRole('button', { name: 'Create group' }).click();
      const members = page.getByRole('list', { name: `Members of ${group}` });
      await expect.poll(() => members.textContent()).toContain('alice');
      await page.getByLabel(`Attach a policy to ${group}`).selectOption('writeonly');
      await expect.poll(() => page.getByRole('list', { name: `Policies of ${group}` }).textContent()).toContain('writeonly');
      const info = await rootSession.call('GET', `admin/v4/iam/group/info?group=${group}`);
      expect(info.body.group).toMatchObject({ name: group, members: ['alice'], policies: ['writeonly'], enabled: true });
      await page.screenshot({ path: join(shots, `iam-groups-${viewport.name}.png`), fullPage: true });
      expect(await violations(page)).toEqual([]);
      await page.getByRole('button', { name: `Remove alice from ${group}` }).click();
      await page.getByRole('button', { name: `Remove group ${group}` }).click();
      const dialog = page.getByRole('dialog');
      expect(await violations(page)).toEqual([]);
      await dialog.getByRole('button', { name: 'Remove group' }).click();
      await expect.poll(async () => (await rootSession.call('GET', `admin/v4/iam/group/info?group=${group}`)).body.Code).toBe('NoSuchGroup');
      await page.context().close();
    });

    it(`shows a new service account's secret once, and never logs it (${viewport.name})`, async () => {
      const page = await openPage(viewport, 'service-accounts', 'Service accounts');
      await page.getByLabel('For the user').selectOption('bob');
      await page.getByLabel('Name (optional)').fill(`backup-${viewport.name}`);
      await page.getByRole('button', { name: 'Create service account' }).click();
      const dialog = page.getByRole('dialog', { name: 'Service account created' });
      const accessKey = (await dialog.getByTestId('new-access-key').textContent()) ?? '';
      const secretKey = (await dialog.getByTestId('new-secret-key').textContent()) ?? '';
      expect(secretKey.length).toBeGreaterThan(20);
      await page.screenshot({ path: join(shots, `iam-service-account-secret-${viewport.name}.png`) });
      expect(await violations(page)).toEqual([]);
      // The keys sign requests with bob's permissions.
      const client = new S3Client({ endpoint: running.server.url, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: accessKey, secretAccessKey: secretKey } });
      expect((await client.send(new ListBucketsCommand({}))).$metadata.httpStatusCode).toBe(200);
      await dialog.getByRole('button', { name: 'Done' }).click();
      await page.getByRole('row').filter({ hasText: accessKey }).waitFor();
      expect(await page.content()).not.toContain(secretKey);
      await page.reload();
      await page.getByRole('row').filter({ hasText: accessKey }).waitFor();
      expect(await page.content()).not.toContain(secretKey);
      const listed = await rootSession.call('GET', 'admin/v4/iam/svcacct/list?all=true');
      expect(JSON.stringify(listed.body)).not.toContain(secretKey);
      expect(running.server.logs()).not.toContain(secretKey);
      await page.screenshot({ path: join(shots, `iam-service-accounts-${viewport.name}.png`), fullPage: true });
      expect(await violations(page)).toEqual([]);
      await page.getByRole('button', { name: `Remove ${accessKey}` }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
      await expect.poll(async () => (await rootSession.call('GET', `admin/v4/iam/svcacct/info?accessKey=${accessKey}`)).body.Code).toBe('NoSuchServiceAccount');
      await page.context().close();
    });
  }

  it('offers a readonly user neither page and refuses its calls, changing nothing', async () => {
    const session = await signIn(running.consoleUrl, reader);
    const pages = (await session.call('GET', 'session')).body.pages as string[];
    expect(pages).not.toContain('groups');
    expect(pages).not.toContain('service-accounts');
    const refused = await session.call('POST', 'admin/v4/iam/group/add?group=sneaky', { body: { members: [reader.accessKey] } });
    expect(refused.status).toBe(403);
    expect((await rootSession.call('GET', 'admin/v4/iam/group/info?group=sneaky')).body.Code).toBe('NoSuchGroup');
    const listed = await session.call('GET', 'admin/v4/iam/svcacct/list?all=true');
    expect(listed.status).toBe(403);
  });
});
