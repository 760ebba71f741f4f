/**
 * What a browser application does against svc, from a headless Chromium on another origin: a
 * cross-origin PUT and GET through presigned URLs (CORS preflight, exposed ETag, a bucket
 * without CORS blocked), and an HTML form upload with a presigned POST policy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateBucketCommand, GetObjectCommand, PutBucketCorsCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import type { Browser } from 'playwright-core';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { missingTool } from './helpers/external-tools.js';

const chromiumPath = '/usr/bin/chromium';
const missing = missingTool('chromium');
if (missing) console.warn(`skipping browser tests: ${missing}`);

let root: string;
let server: SvcProcess;
let s3: S3Client;
let site: Server;
let siteOrigin: string;
let browser: Browser;
/** Pages the site serves, by path. */
const pages = new Map<string, string>();

beforeAll(async () => {
  if (missing) return;
  root = await mkdtemp(join(tmpdir(), 'svc-browser-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')] });
  s3 = s3ClientFor(server.url);
  site = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://site').pathname;
    response.writeHead(200, { 'content-type': 'text/html' }).end(pages.get(path) ?? `<p id="path">${path}</p>`);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox'] });
}, 90_000);
afterAll(async () => {
  await browser?.close();
  site?.close();
  await server?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

describe.skipIf(missing !== undefined)('from Chromium', () => {
  it('cross-origin PUT and GET through presigned URLs pass CORS; a bucket without CORS is blocked', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'web' }));
    await s3.send(new CreateBucketCommand({ Bucket: 'closed' }));
    await s3.send(new PutObjectCommand({ Bucket: 'closed', Key: 'x', Body: 'x' }));
    await s3.send(new PutBucketCorsCommand({ Bucket: 'web', CORSConfiguration: { CORSRules: [{ AllowedOrigins: [siteOrigin], AllowedMethods: ['GET', 'PUT'], AllowedHeaders: ['*'], ExposeHeaders: ['ETag'] }] } }));
    const putUrl = await getSignedUrl(s3, new PutObjectCommand({ Bucket: 'web', Key: 'from-browser.txt' }), { expiresIn: 300 });
    const getUrl = await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'web', Key: 'from-browser.txt' }), { expiresIn: 300 });
    const closedUrl = await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'closed', Key: 'x' }), { expiresIn: 300 });
    pages.set('/app', '<p>app</p>');
    const page = await browser.newPage();
    await page.goto(`${siteOrigin}/app`);
    const outcome = await page.evaluate(async ({ putUrl, getUrl, closedUrl }) => {
      const put = await fetch(putUrl, { method: 'PUT', body: 'written by a page', headers: { 'content-type': 'text/x-browser' } });
      const got = await fetch(getUrl);
      let closed = 'readable';
      try {
        await fetch(closedUrl);
      } catch (error) {
        closed = (error as Error).name;
      }
      return { putStatus: put.status, etag: put.headers.get('etag'), body: await got.text(), closed };
    }, { putUrl, getUrl, closedUrl });
    expect(outcome).toMatchObject({ putStatus: 200, body: 'written by a page', closed: 'TypeError' });
    expect(outcome.etag).toMatch(/^"[0-9a-f]{32}"$/);
    const stored = await s3.send(new GetObjectCommand({ Bucket: 'web', Key: 'from-browser.txt' }));
    expect(stored.ContentType).toBe('text/x-browser');
    await page.close();
  });

  it('an HTML form posts a file with a presigned POST policy and is redirected back', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'forms' }));
    const redirect = `${siteOrigin}/done`;
    const post = await createPresignedPost(s3, {
      Bucket: 'forms', Key: 'uploads/${filename}', Expires: 300,
      Conditions: [['starts-with', '$key', 'uploads/'], ['content-length-range', 1, 4096], { success_action_redirect: redirect }],
      Fields: { success_action_redirect: redirect },
    });
    const inputs = Object.entries(post.fields).map(([name, value]) => `<input type="hidden" name="${name}" value="${value.replace(/"/g, '&quot;')}">`).join('');
    pages.set('/form', `<form id="upload" method="post" action="${post.url}" enctype="multipart/form-data">${inputs}<input type="file" name="file" id="file"><button type="submit">send</button></form>`);
    const page = await browser.newPage();
    await page.goto(`${siteOrigin}/form`);
    await page.setInputFiles('#file', { name: 'picked.txt', mimeType: 'text/plain', buffer: Buffer.from('chosen in a form') });
    await Promise.all([page.waitForURL(/\/done\?/), page.click('button[type=submit]')]);
    const landed = new URL(page.url());
    expect([landed.pathname, landed.searchParams.get('bucket'), landed.searchParams.get('key')]).toEqual(['/done', 'forms', 'uploads/picked.txt']);
    expect(await (await s3.send(new GetObjectCommand({ Bucket: 'forms', Key: 'uploads/picked.txt' }))).Body!.transformToString()).toBe('chosen in a form');
    await page.close();
  });
});
