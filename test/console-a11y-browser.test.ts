/**
 * Accessibility of the console in Chromium: axe-core (`@axe-core/playwright`, WCAG 2 A and AA
 * rules) on every page and dialog at 1440×900 and 390×844 finds no serious or critical violation;
 * and the main actions are reached and done from the keyboard alone (Tab, Enter, Space, Escape).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { repoRoot, s3ClientFor } from './helpers/server-process.js';
import { signIn, startConsoleServer, type ConsoleServer } from './helpers/console-client.js';
import { chromiumPresent, launchChromium, signInOnPage } from './helpers/chromium.js';

const haveChromium = chromiumPresent('the console accessibility test');
const widths = [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
];

let root: string;
let running: ConsoleServer;
let browser: Browser;
let page: Page;

async function go(hash: string): Promise<void> {
  await page.goto(`${running.consoleUrl}/svc/console/#/${hash}`);
  await page.locator('h1').first().waitFor();
}

/** Serious and critical violations of WCAG 2 A/AA rules on the page as it is now, as readable lines. */
async function violations(): Promise<string[]> {
  const { AxeBuilder } = await import('@axe-core/playwright');
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return result.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).slice(0, 3).join(', ')}`);
}

/** Each view: how to reach it from a signed-in page. */
const views: [name: string, open: () => Promise<void>][] = [
  ['overview', () => go('overview')],
  ['buckets', () => go('buckets')],
  ['delete bucket dialog', async () => {
    await go('buckets');
    await page.getByRole('button', { name: 'Delete bucket spare' }).click();
    await page.getByRole('dialog').waitFor();
  }],
  ['object browser', async () => {
    await go('browse/photos/');
    await page.getByRole('button', { name: 'cat.jpg', exact: true }).waitFor();
  }],
  ['object details', async () => {
    await go('browse/photos/');
    await page.getByRole('button', { name: 'cat.jpg', exact: true }).click();
    await page.getByRole('complementary', { name: 'Object details' }).getByText('Versions (1)').waitFor();
  }],
  ['delete objects dialog', async () => {
    await go('browse/photos/');
    // The same address keeps the page, and on a phone the details opened just before cover the list.
    const close = page.getByRole('button', { name: 'Close details' });
    if (await close.count()) await close.click();
    await page.getByLabel('Select cat.jpg').check();
    await page.getByRole('button', { name: 'Delete (1)' }).click();
    await page.getByRole('dialog').waitFor();
  }],
  ['cluster', () => go('cluster')],
  ['operations', () => go('operations')],
  ['explorer', () => go('explorer/photos/cat.jpg')],
  ['users', () => go('users')],
  ['users policy editor', async () => {
    await go('users');
    await page.getByRole('button', { name: 'New policy' }).click();
    await page.getByRole('form', { name: 'Policy editor' }).waitFor();
  }],
  ['users remove user dialog', async () => {
    await go('users');
    await page.getByRole('button', { name: 'Remove user pat' }).click();
    await page.getByRole('dialog').waitFor();
  }],
  ['bucket settings', async () => {
    await go('settings/photos');
    await page.getByRole('region', { name: 'Lifecycle rules' }).getByText('No lifecycle rules').waitFor();
  }],
  ['groups', () => go('groups')],
  ['service accounts', () => go('service-accounts')],
];

describe.skipIf(!haveChromium)('console accessibility', () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-console-a11y-'));
    await mkdir(join(repoRoot, 'test-output/console'), { recursive: true });
    running = await startConsoleServer([join(root, 'd{1...4}')]);
    const s3 = s3ClientFor(running.server.url);
    for (const bucket of ['photos', 'spare']) await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'cat.jpg', Body: 'meow' }));
    const added = await (await signIn(running.consoleUrl)).call('POST', 'users', { body: { accessKey: 'pat', secretKey: 'pat-secret-123', policies: ['readonly'] } });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: widths[0]! })).newPage();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await running?.server.kill();
    await rm(root, { recursive: true, force: true });
  });

  it('the sign-in page has no serious or critical violation at either width', async () => {
    const found: string[] = [];
    for (const viewport of widths) {
      await page.setViewportSize(viewport);
      await page.goto(`${running.consoleUrl}/svc/console/`);
      await page.getByLabel('Access key').waitFor();
      found.push(...(await violations()).map((line) => `sign-in ${viewport.width}: ${line}`));
    }
    expect(found).toEqual([]);
  });

  it('no page or dialog has a serious or critical violation at either width', async () => {
    await page.setViewportSize(widths[0]!);
    await signInOnPage(page, running.consoleUrl);
    const found: string[] = [];
    for (const viewport of widths) {
      await page.setViewportSize(viewport);
      for (const [name, open] of views) {
        await open();
        found.push(...(await violations()).map((line) => `${name} ${viewport.width}: ${line}`));
        if (await page.getByRole('dialog').count()) await page.keyboard.press('Escape');
      }
    }
    expect(found).toEqual([]);
  }, 180_000);

  it('on a phone, opens an object\'s details over the list, in view, with the focus on them', async () => {
    await page.setViewportSize(widths[1]!);
    await go('browse/photos/');
    await page.reload();
    await page.getByRole('button', { name: 'cat.jpg', exact: true }).click();
    const details = page.getByRole('complementary', { name: 'Object details' });
    await details.getByText('Versions (1)').waitFor();
    const box = (await details.boundingBox())!;
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.y).toBeLessThan(100);
    expect(box.width).toBeGreaterThan(380);
    expect(await page.evaluate('document.activeElement?.closest(\'aside\')?.getAttribute(\'aria-label\')')).toBe('Object details');
    await page.screenshot({ path: join(repoRoot, 'test-output/console/narrow-object-details.png') });
    await details.getByRole('button', { name: 'Close details' }).click();
    await expect.poll(() => details.count()).toBe(0);
    await page.setViewportSize(widths[0]!);
  });

  it('signs in, opens a bucket, an object\'s details and a delete dialog, and cancels it, from the keyboard alone', async () => {
    await page.setViewportSize(widths[0]!);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Access key').waitFor();
    // The access key field has the focus on arrival.
    await page.keyboard.type('testadmin');
    await page.keyboard.press('Tab');
    await page.keyboard.type('testadmin-secret');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const tabTo = async (matches: () => Promise<boolean>, what: string) => {
      for (let step = 0; step < 60; step += 1) {
        await page.keyboard.press('Tab');
        if (await matches()) return;
      }
      throw new Error(`${what} is not reached with Tab`);
    };
    const focused = (expression: string) => page.evaluate(`(() => { const element = document.activeElement; return ${expression}; })()`) as Promise<boolean>;
    await tabTo(() => focused("element?.getAttribute('href') === '#/buckets'"), 'the Buckets link');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Buckets', exact: true }).waitFor();
    await tabTo(() => focused("element?.textContent === 'photos'"), 'the photos bucket');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'cat.jpg', exact: true }).waitFor();
    await tabTo(() => focused("element?.textContent === 'cat.jpg'"), 'the object');
    await page.keyboard.press('Enter');
    await page.getByRole('complementary', { name: 'Object details' }).getByText('Versions (1)').waitFor();
    await tabTo(() => focused("element?.getAttribute('aria-label') === 'Select cat.jpg'"), 'the object\'s checkbox');
    await page.keyboard.press('Space');
    await tabTo(() => focused("element?.textContent === 'Delete (1)'"), 'the Delete button');
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await focused("element?.closest('dialog') !== null")).toBe(true);
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);
  });

  it("opens a bucket's settings and adds a tag from the keyboard alone", async () => {
    await page.setViewportSize(widths[0]!);
    await go('buckets');
    const focused = (expression: string) => page.evaluate(`(() => { const element = document.activeElement; return ${expression}; })()`) as Promise<boolean>;
    const tabTo = async (matches: () => Promise<boolean>, what: string) => {
      for (let step = 0; step < 80; step += 1) {
        await page.keyboard.press('Tab');
        if (await matches()) return;
      }
      throw new Error(`${what} is not reached with Tab`);
    };
    await tabTo(() => focused("element?.getAttribute('aria-label') === 'Settings of photos'"), 'the Settings link of photos');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Settings of photos' }).waitFor();
    await page.getByRole('region', { name: 'Tags', exact: true }).getByText('No tags.').waitFor();
    await expect.poll(() => page.getByRole('button', { name: 'Add tag' }).isEnabled()).toBe(true);
    await tabTo(() => focused("element?.textContent === 'Add tag'"), 'Add tag');
    await page.keyboard.press('Enter');
    // The new tag's key field takes the focus.
    await expect.poll(() => focused("element?.getAttribute('name') === 'tag-key-0'")).toBe(true);
    await page.keyboard.type('owner');
    await tabTo(() => focused("element?.textContent === 'Save tags'"), 'Save tags');
    await page.keyboard.press('Enter');
    await page.getByRole('region', { name: 'Tags', exact: true }).getByRole('status').waitFor();
  });
});
