/**
 * A bucket's settings page in Chromium against a real server (with the built-in KMS), at 1440×900
 * and 390×844: the bucket policy (the "make a prefix public" helper, the public warning from
 * GetBucketPolicyStatus, a broken policy refused with S3's MalformedPolicy beside the editor),
 * lifecycle rules from the form and refused XML, CORS, tags, object lock's default retention and
 * default encryption with a KMS key, each read back through S3; notifications read-only; a
 * readonly user's controls disabled with the reason and its calls refused with nothing changed;
 * axe finds no serious or critical violation. Screenshots under test-output/console/settings-*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import {
  CreateBucketCommand,
  GetBucketCorsCommand,
  GetBucketEncryptionCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketPolicyCommand,
  GetBucketTaggingCommand,
  GetObjectLockConfigurationCommand,
  PutBucketPolicyCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { repoRoot, s3ClientFor } from './helpers/server-process.js';
import { signIn, startConsoleServer, type ConsoleServer } from './helpers/console-client.js';
import { chromiumPresent, launchChromium, signInOnPage } from './helpers/chromium.js';

const haveChromium = chromiumPresent('the console bucket settings browser test');
const shots = join(repoRoot, 'test-output/console');
const viewer = { accessKey: 'settings-viewer', secretKey: 'settings-viewer-secret' };
const widths = [
  { name: 'wide', width: 1440, height: 900 },
  { name: 'narrow', width: 390, height: 844 },
];

let root: string;
let running: ConsoleServer;
let browser: Browser;
let s3: S3Client;

async function openPage(viewport: { width: number; height: number }, credentials?: { accessKey: string; secretKey: string }): Promise<Page> {
  const page = await (await browser.newContext({ viewport })).newPage();
  if (credentials) {
    await page.goto(`${running.consoleUrl}/svc/console/`);
    await page.getByLabel('Access key').fill(credentials.accessKey);
    await page.getByLabel('Secret key').fill(credentials.secretKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Buckets', exact: true }).waitFor();
  } else {
    await signInOnPage(page, running.consoleUrl);
  }
  return page;
}

async function openSettings(page: Page, bucket: string): Promise<void> {
  await page.goto(`${running.consoleUrl}/svc/console/#/settings/${bucket}`);
  await page.getByRole('heading', { name: `Settings of ${bucket}` }).waitFor();
}

const section = (page: Page, title: string) => page.getByRole('region', { name: title, exact: true });

async function violations(page: Page): Promise<string[]> {
  const { AxeBuilder } = await import('@axe-core/playwright');
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return result.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).slice(0, 3).join(', ')}`);
}

describe.skipIf(!haveChromium)("a bucket's settings page", () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-console-settings-'));
    await mkdir(shots, { recursive: true });
    running = await startConsoleServer([join(root, 'd{1...4}')], { SVC_KMS_SECRET_KEY: `svc-root:${randomBytes(32).toString('base64')}` });
    s3 = s3ClientFor(running.server.url);
    await s3.send(new CreateBucketCommand({ Bucket: 'site-wide' }));
    await s3.send(new CreateBucketCommand({ Bucket: 'site-narrow' }));
    await s3.send(new CreateBucketCommand({ Bucket: 'vault', ObjectLockEnabledForBucket: true }));
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

  for (const viewport of widths) {
    it(`makes a prefix public with a warning, and refuses a broken policy beside the editor (${viewport.name})`, async () => {
      const bucket = `site-${viewport.name}`;
      const page = await openPage(viewport);
      await page.goto(`${running.consoleUrl}/svc/console/#/buckets`);
      await page.getByRole('link', { name: `Settings of ${bucket}` }).click();
      await page.getByRole('heading', { name: `Settings of ${bucket}` }).waitFor();
      const policy = section(page, 'Bucket policy');
      await policy.getByTestId('policy-status').waitFor();
      await policy.getByLabel(/Prefix to make public/).fill('public/');
      await policy.getByRole('button', { name: 'Make this prefix public (read-only)' }).click();
      await policy.getByTestId('public-draft').waitFor();
      await expect.poll(() => policy.getByLabel('Policy (JSON)').inputValue()).toContain(`arn:aws:s3:::${bucket}/public/*`);
      await policy.getByRole('button', { name: 'Save', exact: true }).click();
      await policy.getByTestId('public-warning').waitFor();
      const stored = JSON.parse((await s3.send(new GetBucketPolicyCommand({ Bucket: bucket }))).Policy ?? '{}');
      expect(stored.Statement[0].Resource).toEqual([`arn:aws:s3:::${bucket}/public/*`]);
      await policy.screenshot({ path: join(shots, `settings-policy-public-${viewport.name}.png`) });
      // A statement with an unknown action: S3's parser refuses it, the stored policy stays.
      await policy.getByLabel('Policy (JSON)').fill(JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: '*', Action: 's3:Fly', Resource: `arn:aws:s3:::${bucket}/*` }] }));
      await policy.getByRole('button', { name: 'Save', exact: true }).click();
      await expect.poll(() => policy.getByRole('alert').last().textContent()).toContain('MalformedPolicy');
      expect(await policy.getByRole('alert').last().textContent()).toContain('s3:Fly');
      expect(JSON.parse((await s3.send(new GetBucketPolicyCommand({ Bucket: bucket }))).Policy ?? '{}')).toEqual(stored);
      await policy.screenshot({ path: join(shots, `settings-policy-refused-${viewport.name}.png`) });
      expect(await violations(page)).toEqual([]);
      await page.context().close();
    });

    it(`adds a lifecycle rule from the form, refuses bad XML, and saves CORS, tags and encryption (${viewport.name})`, async () => {
      const bucket = `site-${viewport.name}`;
      const page = await openPage(viewport);
      await openSettings(page, bucket);
      const lifecycle = section(page, 'Lifecycle rules');
      await lifecycle.getByText('No lifecycle rules').waitFor();
      await lifecycle.getByLabel('Rule name').fill('expire-logs');
      await lifecycle.getByLabel(/^Prefix/).fill('logs/');
      await lifecycle.getByLabel('Expire objects after (days)').fill('30');
      await lifecycle.getByLabel('Abort unfinished uploads after (days)').fill('7');
      await lifecycle.getByRole('button', { name: 'Add rule' }).click();
      await expect.poll(() => lifecycle.getByRole('table', { name: 'Lifecycle rules' }).textContent()).toContain('expire after 30 days; abort unfinished uploads after 7 days');
      const rules = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }));
      expect(rules.Rules?.map((rule) => [rule.ID, rule.Expiration?.Days, rule.AbortIncompleteMultipartUpload?.DaysAfterInitiation])).toEqual([['expire-logs', 30, 7]]);
      // The section is drawn again once the saved rule is read back: open the editor in the section as drawn.
      const editor = lifecycle.getByLabel('LifecycleConfiguration');
      await expect.poll(async () => (await editor.isVisible()) || (await lifecycle.getByText('Edit the lifecycle XML').click(), false), { timeout: 10_000 }).toBe(true);
      await editor.fill('<LifecycleConfiguration><Rule><ID>x</ID><Status>Sometimes</Status></Rule></LifecycleConfiguration>');
      await lifecycle.getByRole('button', { name: 'Save', exact: true }).click();
      await expect.poll(() => lifecycle.getByRole('alert').first().textContent()).toContain('MalformedXML');
      expect((await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }))).Rules?.map((rule) => rule.ID)).toEqual(['expire-logs']);
      await lifecycle.screenshot({ path: join(shots, `settings-lifecycle-${viewport.name}.png`) });

      const cors = section(page, 'CORS');
      await cors.getByText('Not set.').waitFor();
      await cors.getByRole('button', { name: 'Save', exact: true }).click();
      await cors.getByRole('status').waitFor();
      expect((await s3.send(new GetBucketCorsCommand({ Bucket: bucket }))).CORSRules?.[0]?.AllowedOrigins).toEqual(['https://www.example.com']);

      const tags = section(page, 'Tags');
      await tags.getByRole('button', { name: 'Add tag' }).click();
      await tags.getByLabel('Tag key 1').fill('team');
      await tags.getByLabel('Tag value 1').fill('web & <ops>');
      await tags.getByRole('button', { name: 'Save tags' }).click();
      await tags.getByRole('status').waitFor();
      expect((await s3.send(new GetBucketTaggingCommand({ Bucket: bucket }))).TagSet).toEqual([{ Key: 'team', Value: 'web & <ops>' }]);

      const encryption = section(page, 'Default encryption');
      await encryption.getByLabel('New objects are encrypted with').selectOption('aws:kms');
      await encryption.locator('select[name="kms-key"]').selectOption('svc-root');
      await encryption.getByRole('button', { name: 'Save encryption' }).click();
      await encryption.getByRole('status').waitFor();
      const sse = await s3.send(new GetBucketEncryptionCommand({ Bucket: bucket }));
      expect(sse.ServerSideEncryptionConfiguration?.Rules?.[0]?.ApplyServerSideEncryptionByDefault).toMatchObject({ SSEAlgorithm: 'aws:kms', KMSMasterKeyID: 'svc-root' });

      const notifications = section(page, 'Notifications');
      await notifications.getByText('No notification rules').waitFor();
      await notifications.getByText('No event targets are configured').waitFor();
      await page.screenshot({ path: join(shots, `settings-page-${viewport.name}.png`), fullPage: true });
      expect(await violations(page)).toEqual([]);
      await page.context().close();
    });
  }

  it("sets an object-lock bucket's default retention, and shows S3's refusal of a zero-day one", async () => {
    const page = await openPage(widths[0]!);
    await openSettings(page, 'vault');
    const lock = section(page, 'Object lock');
    // The section draws the stored retention once it is read: choose the mode in the section as drawn.
    const days = lock.locator('input[name="retention-days"]');
    await expect.poll(async () => (await lock.locator('select[name="retention-mode"]').selectOption('GOVERNANCE'), days.isEnabled()), { timeout: 10_000 }).toBe(true);
    await days.fill('0');
    await lock.getByRole('button', { name: 'Save retention' }).click();
    await expect.poll(() => lock.getByRole('alert').textContent(), { timeout: 15_000 }).toContain('InvalidRetentionPeriod');
    await lock.locator('input[name="retention-days"]').fill('5');
    await lock.getByRole('button', { name: 'Save retention' }).click();
    await lock.getByRole('status').waitFor();
    const stored = await s3.send(new GetObjectLockConfigurationCommand({ Bucket: 'vault' }));
    expect(stored.ObjectLockConfiguration?.Rule?.DefaultRetention).toEqual({ Mode: 'GOVERNANCE', Days: 5 });
    // Versioning of an object-lock bucket cannot be suspended: the page says why.
    await section(page, 'Versioning').getByText('Object lock keeps versioning enabled').waitFor();
    await lock.screenshot({ path: join(shots, 'settings-object-lock-wide.png') });
    await page.context().close();
  }, 120_000);

  for (const viewport of widths) {
    it(`offers a readonly user no change, with the reason, and the server refuses its calls (${viewport.name})`, async () => {
      await s3.send(new PutBucketPolicyCommand({ Bucket: 'vault', Policy: JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Deny', Principal: '*', Action: 's3:DeleteBucket', Resource: 'arn:aws:s3:::vault' }] }) }));
      const page = await openPage(viewport, viewer);
      await openSettings(page, 'vault');
      const policy = section(page, 'Bucket policy');
      const save = policy.getByRole('button', { name: 'Save', exact: true });
      // Every button is disabled while the permissions are still being read: wait for the reason that names the action.
      await expect.poll(() => policy.locator('#policy-json-save-why').textContent(), { timeout: 10_000 }).toContain('s3:PutBucketPolicy');
      expect(await save.isDisabled()).toBe(true);
      expect(await section(page, 'Tags').getByRole('button', { name: 'Save tags' }).isDisabled()).toBe(true);
      expect(await section(page, 'Object lock').getByRole('button', { name: 'Save retention' }).isDisabled()).toBe(true);
      await page.screenshot({ path: join(shots, `settings-readonly-${viewport.name}.png`), fullPage: true });
      expect(await violations(page)).toEqual([]);
      const session = await signIn(running.consoleUrl, viewer);
      const refused = await session.call('PUT', 'buckets/vault/settings/policy', { body: { document: '{"Version":"2012-10-17","Statement":[]}' } });
      expect(refused.status).toBe(403);
      expect(refused.body.Code).toBe('AccessDenied');
      const removed = await session.call('DELETE', 'buckets/vault/settings/policy');
      expect(removed.status).toBe(403);
      expect((await s3.send(new GetBucketPolicyCommand({ Bucket: 'vault' }))).Policy).toContain('s3:DeleteBucket');
      await page.context().close();
    });
  }
});
