/**
 * The object page's previews, encryption and copy buttons, in Chromium against a real server (four
 * drives, EC:2, the built-in KMS): an image is shown as an image, an HTML object as its text (never
 * run: the preview answers text/plain under the sandbox policy), a type not previewed and an
 * encrypted version say why; the encryption HEAD reports is shown (SSE-KMS with its key, SSE-S3,
 * none) and a compressed version's stored size; the key's Copy button puts the key on the clipboard. Both widths, axe, keyboard.
 * Screenshots under test-output/console/preview-*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync, crc32 } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { CreateBucketCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { repoRoot, s3ClientFor } from './helpers/server-process.js';
import { signIn, startConsoleServer, type ConsoleServer } from './helpers/console-client.js';
import { chromiumPresent, launchChromium, signInOnPage } from './helpers/chromium.js';
import { seriousViolations } from './helpers/axe.js';

const haveChromium = chromiumPresent('the console preview browser test');
const shots = join(repoRoot, 'test-output/console');
const kmsKey = `svc-root:${Buffer.alloc(32, 7).toString('base64')}`;
const widths = [
  { name: 'wide', width: 1440, height: 900 },
  { name: 'narrow', width: 390, height: 844 },
];

/** A small valid PNG (a 16×16 blue square). */
function png(): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(8 + data.length + 4);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(16, 0);
  header.writeUInt32BE(16, 4);
  header[8] = 8;
  header[9] = 2;
  const rows = Buffer.concat(Array.from({ length: 16 }, () => Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: 16 }, () => [31, 79, 209]).flat())])));
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

const logText = Buffer.alloc(200 * 1024);
for (let offset = 0, line = 0; offset < logText.length; line += 1) offset += logText.write(`${line} GET /media/${line % 97}.png 200\n`, offset, 'latin1');

let root: string;
let running: ConsoleServer;
let browser: Browser;

const violations = seriousViolations;

async function open(page: Page, key: string): Promise<ReturnType<Page['getByRole']>> {
  await page.goto(`${running.consoleUrl}/svc/console/#/browse/media/`);
  // On a phone the open details cover the list: close them first.
  const close = page.getByRole('button', { name: 'Close details' });
  if ((await close.count()) > 0) await close.click();
  await page.getByRole('button', { name: key, exact: true }).click();
  const details = page.getByRole('complementary', { name: 'Object details' });
  await details.getByTestId('object-preview').waitFor();
  return details;
}

describe.skipIf(!haveChromium)('the object page previews, shows encryption and copies', () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-console-preview-'));
    await mkdir(shots, { recursive: true });
    running = await startConsoleServer([join(root, 'd{1...4}')], { SVC_KMS_SECRET_KEY: kmsKey, SVC_COMPRESSION_ENABLE: 'on' });
    const s3 = s3ClientFor(running.server.url);
    await s3.send(new CreateBucketCommand({ Bucket: 'media' }));
    await s3.send(new PutObjectCommand({ Bucket: 'media', Key: 'square.png', Body: png(), ContentType: 'image/png' }));
    await s3.send(new PutObjectCommand({ Bucket: 'media', Key: 'page.html', Body: '<h1 id="x">Hello</h1><script>document.title="ran"</script>', ContentType: 'text/html' }));
    await s3.send(new PutObjectCommand({ Bucket: 'media', Key: 'data.bin', Body: Buffer.alloc(64, 1), ContentType: 'application/octet-stream' }));
    await s3.send(new PutObjectCommand({ Bucket: 'media', Key: 'sealed.txt', Body: 'secret words', ContentType: 'text/plain', ServerSideEncryption: 'aws:kms' }));
    await s3.send(new PutObjectCommand({ Bucket: 'media', Key: 'sealed-s3.txt', Body: 'more words', ContentType: 'text/plain', ServerSideEncryption: 'AES256' }));
    // 200 KiB of log lines: stored compressed (the other objects are too small to shrink).
    await s3.send(new PutObjectCommand({ Bucket: 'media', Key: 'access.log', Body: logText, ContentType: 'text/plain' }));
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await running?.server.kill();
    await rm(root, { recursive: true, force: true });
  });

  it('serves previews inline under the sandbox policy, text as text/plain, and refuses what it does not preview', async () => {
    const session = await signIn(running.consoleUrl);
    const html = await fetch(`${running.consoleUrl}/svc/console/api/buckets/media/preview?key=page.html`, { headers: { cookie: session.cookie } });
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(html.headers.get('content-security-policy')).toBe("sandbox; default-src 'none'; frame-ancestors 'none'");
    expect(html.headers.get('x-content-type-options')).toBe('nosniff');
    expect(html.headers.get('content-disposition')).toBe('inline');
    expect(await html.text()).toContain('<script>');
    for (const [key, pattern] of [['data.bin', /application\/octet-stream is not previewed/], ['sealed.txt', /encrypted objects are not previewed/]] as const) {
      const refused = await session.call('GET', `buckets/media/preview?key=${key}`);
      expect(refused.status).toBe(415);
      expect(refused.body.Code).toBe('PreviewUnavailable');
      expect(refused.body.Message).toMatch(pattern);
    }
  });

  for (const size of widths) {
    it(`previews an image and a text, says why for others, shows encryption, copies the key (${size.width}×${size.height})`, async () => {
      const context = await browser.newContext({ viewport: { width: size.width, height: size.height }, permissions: ['clipboard-read', 'clipboard-write'] });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      await signInOnPage(page, running.consoleUrl);

      let details = await open(page, 'square.png');
      const image = details.getByRole('img', { name: 'Preview of square.png' });
      await expect.poll(() => image.evaluate((node) => (node as unknown as { naturalWidth: number }).naturalWidth)).toBe(16);
      expect(await details.getByTestId('object-encryption').textContent()).toBe('none');
      await page.screenshot({ path: join(shots, `preview-image-${size.name}.png`) });
      expect(await violations(page)).toEqual([]);

      details = await open(page, 'page.html');
      const text = details.locator('pre.preview-text');
      await expect.poll(() => text.textContent()).toContain('<script>document.title="ran"</script>');
      expect(await page.title()).not.toBe('ran');
      // The text can be scrolled from the keyboard: it takes the focus.
      await details.locator('pre.preview-text').focus();
      expect(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { tagName: string } | null } }).document.activeElement?.tagName)).toBe('PRE');
      await details.getByRole('button', { name: 'Copy key' }).click();
      await expect.poll(() => page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText())).toBe('page.html');
      expect(await details.getByRole('button', { name: 'Copy key' }).textContent()).toBe('Copied');
      await page.screenshot({ path: join(shots, `preview-text-${size.name}.png`) });

      details = await open(page, 'data.bin');
      expect(await details.getByTestId('object-preview').textContent()).toContain('application/octet-stream is not previewed.');

      details = await open(page, 'sealed.txt');
      const head = await s3ClientFor(running.server.url).send(new HeadObjectCommand({ Bucket: 'media', Key: 'sealed.txt' }));
      expect(head.ServerSideEncryption).toBe('aws:kms');
      expect(await details.getByTestId('object-encryption').textContent()).toBe(`SSE-KMS (aws:kms), key ${head.SSEKMSKeyId}`);
      expect(await details.getByTestId('object-preview').textContent()).toContain('Encrypted versions are not previewed.');
      await page.screenshot({ path: join(shots, `preview-encrypted-${size.name}.png`) });
      expect(await violations(page)).toEqual([]);

      details = await open(page, 'sealed-s3.txt');
      expect(await details.getByTestId('object-encryption').textContent()).toBe('SSE-S3 (AES256)');
      expect(await details.getByTestId('object-compression').count()).toBe(0);

      details = await open(page, 'access.log');
      expect(await details.getByTestId('object-compression').textContent()).toMatch(/^Compressed \(zstd\), stored [\d.]+ KiB of 200.0 KiB$/);
      expect(errors).toEqual([]);
      await context.close();
    });
  }
});
