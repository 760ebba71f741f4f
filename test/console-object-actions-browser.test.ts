/**
 * The object page's changes in Chromium against a real server (four drives, EC:2), each read back
 * through S3: an older version restored as the latest (its bytes back, every version kept), tags
 * edited, metadata and content type edited by a copy in place (tags kept), a folder created (an
 * empty `name/` object, shown as a folder), a folder deleted with its count shown first (every
 * version of a versioned folder), a folder deleted by a user denied part of it (the denied key
 * reported by name, the others deleted), and a PDF previewed in a frame under the sandbox policy.
 * A readonly user is offered none of these controls and its calls are refused with nothing
 * changed. Screenshots under test-output/console/actions-*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { CreateBucketCommand, GetObjectCommand, GetObjectTaggingCommand, HeadObjectCommand, ListObjectVersionsCommand, PutBucketVersioningCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { repoRoot, s3ClientFor } from './helpers/server-process.js';
import { signIn, startConsoleServer, type ConsoleServer, type ConsoleSession } from './helpers/console-client.js';
import { chromiumPresent, launchChromium, openConsolePage } from './helpers/chromium.js';
import { seriousViolations } from './helpers/axe.js';

const haveChromium = chromiumPresent('the console object actions browser test');
const shots = join(repoRoot, 'test-output/console');
const bucket = 'acts';
const pruner = { accessKey: 'pruner', secretKey: 'pruner-secret-1' };
const reader = { accessKey: 'reader', secretKey: 'reader-secret-1' };

/** A one-page PDF saying "Hello PDF". */
const pdf = [
  '%PDF-1.4',
  '1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj',
  '2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj',
  '3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 300 120]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>endobj',
  '4 0 obj<</Length 41>>stream',
  'BT /F1 24 Tf 30 50 Td (Hello PDF) Tj ET',
  'endstream endobj',
  '5 0 obj<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>endobj',
  'trailer<</Root 1 0 R>>',
  '%%EOF',
].join('\n');

let root: string;
let running: ConsoleServer;
let browser: Browser;
let s3: S3Client;
let rootSession: ConsoleSession;

const text = async (key: string, versionId?: string) => (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, ...(versionId ? { VersionId: versionId } : {}) }))).Body!.transformToString();
const put = (key: string, body: string, contentType = 'text/plain') => s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType }));

function openPage(viewport: { width: number; height: number }, hash: string, credentials?: { accessKey: string; secretKey: string }): Promise<Page> {
  return openConsolePage(browser, running.consoleUrl, { viewport, hash, ...(credentials ? { credentials } : {}) });
}

async function details(page: Page, name: string) {
  await page.getByRole('button', { name, exact: true }).click();
  const pane = page.getByRole('complementary', { name: 'Object details' });
  await pane.getByRole('heading', { name }).waitFor();
  return pane;
}

describe.skipIf(!haveChromium)('object actions on the object page', () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-console-actions-'));
    await mkdir(shots, { recursive: true });
    running = await startConsoleServer([join(root, 'd{1...4}')]);
    s3 = s3ClientFor(running.server.url);
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    await s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
    await put('doc.txt', 'first words');
    await put('doc.txt', 'second words');
    await put('report.pdf', pdf, 'application/pdf');
    for (const key of ['old/a.txt', 'old/b.txt', 'old/c.txt']) await put(key, key);
    await put('old/a.txt', 'a again');
    for (const key of ['proj/a.txt', 'proj/b.txt', 'proj/locked/c.txt']) await put(key, key);
    rootSession = await signIn(running.consoleUrl);
    const document = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:ListAllMyBuckets', 's3:ListBucket', 's3:GetObject', 's3:DeleteObject'], Resource: ['arn:aws:s3:::*'] }, { Effect: 'Deny', Action: ['s3:DeleteObject'], Resource: [`arn:aws:s3:::${bucket}/proj/locked/*`] }] };
    expect((await rootSession.call('PUT', 'policies/pruning', { body: { document: JSON.stringify(document) } })).status).toBe(200);
    expect((await rootSession.call('POST', 'users', { body: { ...pruner, policies: ['pruning'] } })).status).toBe(200);
    expect((await rootSession.call('POST', 'users', { body: { ...reader, policies: ['readonly'] } })).status).toBe(200);
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await running?.server.kill();
    await rm(root, { recursive: true, force: true });
  });

  it('restores an older version, edits tags and metadata, each read back through S3', async () => {
    const page = await openPage({ width: 1440, height: 900 }, `browse/${bucket}/`);
    let pane = await details(page, 'doc.txt');
    const older = (await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: 'doc.txt' }))).Versions!.find((version) => !version.IsLatest)!;
    await pane.getByRole('button', { name: `Restore version ${older.VersionId} as the latest` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Restore', exact: true }).click();
    await expect.poll(() => text('doc.txt')).toBe('first words');
    await expect.poll(() => pane.getByRole('heading', { name: /^Versions/ }).textContent()).toBe('Versions (3)');

    await pane.getByRole('button', { name: 'Edit tags' }).click();
    let dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Add tag' }).click();
    await dialog.getByLabel('Key 1').fill('team');
    await dialog.getByLabel('Value 1').fill('web & ops');
    await dialog.getByRole('button', { name: 'Save tags' }).click();
    await expect.poll(async () => (await s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: 'doc.txt' }))).TagSet).toEqual([{ Key: 'team', Value: 'web & ops' }]);
    await expect.poll(() => pane.getByTestId('object-tags').textContent()).toBe('team=web & ops');

    // S3's own refusal stays in the dialog: a reserved tag key.
    await pane.getByRole('button', { name: 'Edit tags' }).click();
    dialog = page.getByRole('dialog');
    await dialog.getByLabel('Key 1').fill('aws:reserved');
    await dialog.getByRole('button', { name: 'Save tags' }).click();
    await expect.poll(() => dialog.getByRole('alert').textContent()).toContain('InvalidTag');
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    await pane.getByRole('button', { name: 'Edit metadata' }).click();
    dialog = page.getByRole('dialog');
    await dialog.getByLabel('Content type').fill('text/markdown');
    await dialog.getByLabel('cache-control').fill('max-age=60');
    await dialog.getByRole('button', { name: 'Add metadata entry' }).click();
    await dialog.getByLabel('Name 1').fill('owner');
    await dialog.getByLabel('Value 1').fill('ana');
    await page.screenshot({ path: join(shots, 'actions-metadata-wide.png') });
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Save metadata' }).click();
    await expect.poll(async () => (await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'doc.txt' }))).ContentType).toBe('text/markdown');
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'doc.txt' }));
    expect([head.CacheControl, head.Metadata, head.TagCount]).toEqual(['max-age=60', { owner: 'ana' }, 1]);
    expect(await text('doc.txt')).toBe('first words');
    pane = page.getByRole('complementary', { name: 'Object details' });
    await expect.poll(() => pane.getByRole('heading', { name: /^Versions/ }).textContent()).toBe('Versions (4)');
    await page.screenshot({ path: join(shots, 'actions-object-wide.png'), fullPage: true });
  });

  it('creates a folder and deletes one with every version after showing its count', async () => {
    const page = await openPage({ width: 390, height: 844 }, `browse/${bucket}/`);
    await page.getByRole('button', { name: 'Create folder' }).click();
    let dialog = page.getByRole('dialog');
    await dialog.getByLabel(/Folder name/).fill('fresh');
    await dialog.getByRole('button', { name: 'Create folder' }).click();
    await page.getByRole('link', { name: 'fresh/' }).waitFor();
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'fresh/' }))).ContentLength).toBe(0);
    // Inside, the folder's own object is not listed as an entry.
    await page.getByRole('link', { name: 'fresh/' }).click();
    await page.getByText('This folder is empty.').waitFor();
    await page.goto(`${running.consoleUrl}/svc/console/#/browse/${bucket}/`);

    await page.getByRole('button', { name: 'Delete folder old/' }).click();
    dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.getByTestId('folder-count').textContent()).toContain('It holds 3 object(s), 4 version(s) in all, 0 of them delete markers.');
    await dialog.getByLabel('Also delete every version and delete marker, for good').check();
    await page.screenshot({ path: join(shots, 'actions-delete-folder-narrow.png') });
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Delete every version' }).click();
    await expect.poll(() => dialog.getByTestId('folder-progress').textContent()).toBe('Finished: 4 deleted.');
    await dialog.getByRole('button', { name: 'Done' }).click();
    expect((await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: 'old/' }))).Versions ?? []).toEqual([]);
    await expect.poll(() => page.getByRole('link', { name: 'old/' }).count()).toBe(0);
  });

  it('a user denied part of a folder deletes the rest and is told which keys stayed', async () => {
    const page = await openPage({ width: 1440, height: 900 }, `browse/${bucket}/`, pruner);
    await page.getByRole('button', { name: 'Delete folder proj/' }).click();
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.getByTestId('folder-count').textContent()).toContain('It holds 3 object(s)');
    await dialog.getByRole('button', { name: 'Delete folder' }).click();
    await expect.poll(() => dialog.getByTestId('folder-progress').textContent()).toBe('Finished: 2 deleted, 1 refused.');
    const kept = dialog.getByRole('list', { name: 'Not deleted' });
    expect(await kept.textContent()).toContain('proj/locked/c.txt');
    expect(await kept.textContent()).toContain('AccessDenied');
    await page.screenshot({ path: join(shots, 'actions-delete-refused-wide.png') });
    const live = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: 'proj/' }));
    expect((live.DeleteMarkers ?? []).map((marker) => marker.Key).sort()).toEqual(['proj/a.txt', 'proj/b.txt']);
    expect(await text('proj/locked/c.txt')).toBe('proj/locked/c.txt');
  });

  it('previews a PDF in a frame that only the console may frame, still sandboxed', async () => {
    const page = await openPage({ width: 1440, height: 900 }, `browse/${bucket}/`);
    const pageHeaders = (await page.request.get(`${running.consoleUrl}/svc/console/`)).headers();
    expect(pageHeaders['content-security-policy']).toContain("frame-src 'self'");
    expect(pageHeaders['content-security-policy']).toContain("frame-ancestors 'none'");
    const pane = await details(page, 'report.pdf');
    const frame = pane.locator('iframe.preview-pdf');
    await frame.waitFor();
    expect(await frame.getAttribute('title')).toBe('Preview of report.pdf');
    const answer = await page.request.get(new URL(`/svc/console/${(await frame.getAttribute('src'))!}`, running.consoleUrl).href);
    expect(answer.status()).toBe(200);
    expect([answer.headers()['content-type'], answer.headers()['content-security-policy'], answer.headers()['x-frame-options'], answer.headers()['content-disposition']]).toEqual(['application/pdf', "sandbox; default-src 'none'; frame-ancestors 'self'", 'SAMEORIGIN', 'inline']);
    // Other previews still refuse every frame.
    const textPreview = await page.request.get(`${running.consoleUrl}/svc/console/api/buckets/${bucket}/preview?key=doc.txt`);
    expect([textPreview.headers()['content-security-policy'], textPreview.headers()['x-frame-options']]).toEqual(["sandbox; default-src 'none'; frame-ancestors 'none'", 'DENY']);
    await page.screenshot({ path: join(shots, 'actions-pdf-wide.png') });
  });

  it('refuses bad input by name, changing nothing', async () => {
    const before = JSON.stringify(await s3.send(new ListObjectVersionsCommand({ Bucket: bucket })), ['Versions', 'DeleteMarkers', 'Key', 'VersionId', 'ETag']);
    const refusals: [string, string, unknown, string, string][] = [
      ['POST', 'folder', { key: 'no-slash' }, 'InvalidArgument', 'ending with one /'],
      ['POST', 'folder', { key: 'a//b/' }, 'InvalidObjectName', ''],
      ['PUT', 'metadata', { key: 'doc.txt', metadata: { 'bad name': 'x' } }, 'InvalidArgument', 'bad name'],
      ['PUT', 'metadata', { key: 'doc.txt', metadata: { note: 'café' } }, 'InvalidArgument', 'printable ASCII'],
      ['PUT', 'metadata', { key: 'doc.txt', headers: { 'x-evil': '1' } }, 'InvalidArgument', 'x-evil'],
      ['PUT', 'tags', { key: 'doc.txt', tags: [{ key: 'a' }] }, 'InvalidArgument', 'value'],
      ['PUT', 'tags', { key: 'doc.txt', tags: Array.from({ length: 11 }, (_item, index) => ({ key: `k${index}`, value: 'v' })) }, 'InvalidTag', '10'],
      ['POST', 'restore', { key: 'doc.txt' }, 'InvalidArgument', 'versionId'],
      ['POST', 'delete-prefix', { prefix: '' }, 'InvalidArgument', 'folder'],
      ['POST', 'delete-prefix', { prefix: 'doc.txt' }, 'InvalidArgument', 'ending with /'],
    ];
    for (const [method, action, body, code, words] of refusals) {
      const answer = await rootSession.call(method, `buckets/${bucket}/${action}`, { body });
      expect([answer.status, answer.body.Code], JSON.stringify(body)).toEqual([400, code]);
      expect(answer.body.Message).toContain(words);
    }
    const latest = (await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: 'doc.txt' }))).Versions!.find((version) => version.IsLatest)!;
    const again = await rootSession.call('POST', `buckets/${bucket}/restore`, { body: { key: 'doc.txt', versionId: latest.VersionId } });
    expect([again.status, again.body.Code, again.body.Message]).toEqual([400, 'InvalidArgument', 'this version is the latest already: there is nothing to restore']);
    expect(JSON.stringify(await s3.send(new ListObjectVersionsCommand({ Bucket: bucket })), ['Versions', 'DeleteMarkers', 'Key', 'VersionId', 'ETag'])).toBe(before);
  });

  it('a readonly user is offered none of them, and its calls are refused with nothing changed', async () => {
    const page = await openPage({ width: 1440, height: 900 }, `browse/${bucket}/`, reader);
    const pane = await details(page, 'doc.txt');
    await pane.getByRole('heading', { name: /^Versions/ }).waitFor();
    await page.getByRole('button', { name: 'Upload files' }).waitFor();
    for (const name of ['Edit tags', 'Edit metadata', 'Create folder']) expect(await page.getByRole('button', { name }).count(), name).toBe(0);
    expect(await page.getByRole('button', { name: /^Restore version/ }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Delete folder/ }).count()).toBe(0);
    await page.screenshot({ path: join(shots, 'actions-readonly-wide.png') });

    const session = await signIn(running.consoleUrl, reader);
    const before = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket }));
    const calls: [string, string, unknown][] = [
      ['PUT', `buckets/${bucket}/tags`, { key: 'doc.txt', tags: [] }],
      ['PUT', `buckets/${bucket}/metadata`, { key: 'doc.txt', contentType: 'text/plain' }],
      ['POST', `buckets/${bucket}/restore`, { key: 'doc.txt', versionId: before.Versions!.find((version) => !version.IsLatest)!.VersionId }],
      ['POST', `buckets/${bucket}/folder`, { key: 'sneaky/' }],
    ];
    for (const [method, path, body] of calls) {
      const answer = await session.call(method, path, { body });
      expect([answer.status, answer.body.Code], path).toEqual([403, 'AccessDenied']);
    }
    // A folder delete judges each key: every one refused, none deleted.
    const batch = await session.call('POST', `buckets/${bucket}/delete-prefix`, { body: { prefix: 'proj/' } });
    expect(batch.status).toBe(200);
    expect([batch.body.deleted, batch.body.refused.map((item: { key: string }) => item.key)]).toEqual([0, ['proj/locked/c.txt']]);
    const after = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket }));
    expect(JSON.stringify([after.Versions, after.DeleteMarkers])).toBe(JSON.stringify([before.Versions, before.DeleteMarkers]));
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: 'doc.txt' }))).TagSet).toEqual([{ Key: 'team', Value: 'web & ops' }]);
  });
});
