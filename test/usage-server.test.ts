/**
 * The data-usage scanner on a real server (four drives, EC:2): a scan started by the admin route
 * counts what ListObjectVersions shows per bucket (objects, versions, delete markers, bytes), the
 * answer fits its declared schema, the node scans on its own soon after start, `rc du` prints it as a table and as JSON, the node's metrics
 * carry it per bucket and in all, a caller without admin:DataUsageInfo is refused, and the result
 * outlives a restart (read back from usage.bin with its age).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteObjectCommand, ListObjectVersionsCommand, PutBucketVersioningCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { rcIn } from './helpers/rc-process.js';
import { parseExposition, sampleValue } from './helpers/metrics.js';
import { waitFor } from './helpers/poll.js';
import { usageRoutes } from '../src/api/admin/usage.js';
import { fitsRouteSchema } from './helpers/route-schema.js';

const usagePath = '/svc/admin/v4/data-usage';

const fitsSchema = (path: string, answer: unknown): void => fitsRouteSchema(usageRoutes, path, answer);

let root: string;
let home: string;
let server: SvcProcess;
let s3: S3Client;
const args = (): string[] => [join(root, 'd{1...4}')];
const env = { SVC_CONSOLE_ENABLE: 'false', SVC_PROMETHEUS_AUTH_TYPE: 'public' };

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-usage-'));
  home = await mkdtemp(join(tmpdir(), 'svc-usage-rc-'));
  server = await startSvc({ args: args(), env });
  s3 = s3ClientFor(server.url);
}, 60_000);
afterAll(async () => {
  await server?.kill();
  await rm(root, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
});

/** Counts from ListObjectVersions, the way a client would add them up. */
async function listed(bucket: string) {
  const answer = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket }));
  const versions = answer.Versions ?? [];
  const latest = versions.filter((version) => version.IsLatest);
  return {
    bucket,
    objects: latest.length,
    versions: versions.length,
    deleteMarkers: (answer.DeleteMarkers ?? []).length,
    sizeBytes: versions.reduce((sum, version) => sum + (version.Size ?? 0), 0),
    currentSizeBytes: latest.reduce((sum, version) => sum + (version.Size ?? 0), 0),
  };
}

/** Starts a scan (after the scheduled one, when that runs: 409 DataUsageScanRunning) and waits for its end. */
async function scanned(): Promise<Record<string, any>> {
  const started = await waitFor('a data-usage scan to start', async () => {
    const answer = await admin(server.url, 'POST', `${usagePath}/scan`);
    if (answer.status === 409 && answer.body.Code === 'DataUsageScanRunning') return undefined;
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body;
  }, { timeoutMs: 30_000, intervalMs: 100 });
  fitsSchema(`${usagePath}/scan`, started);
  return waitFor('the data-usage scan to finish', async () => {
    const answer = await admin(server.url, 'GET', usagePath);
    return answer.status === 200 && answer.body.current === null && answer.body.last?.startedAt === started.started.startedAt ? answer.body : undefined;
  }, { timeoutMs: 30_000, intervalMs: 50 });
}

describe('data-usage scanner on a server', () => {
  it('counts what the listing shows, per bucket and in all; rc du and the metrics show it; a refusal changes nothing', async () => {
    // The node holding the first endpoint scans on its own soon after start (no result yet); the
    // next scheduled scan is ten minutes after that one, so nothing below races a scheduled scan.
    const first = await waitFor('the first scheduled scan', async () => {
      const answer = await admin(server.url, 'GET', usagePath);
      return answer.body.last !== null && answer.body.current === null ? answer.body : undefined;
    }, { timeoutMs: 30_000, intervalMs: 100 });
    expect(first.nextScanAt).not.toBeNull();
    await s3.send(new CreateBucketCommand({ Bucket: 'photos' }));
    await s3.send(new CreateBucketCommand({ Bucket: 'history' }));
    await s3.send(new CreateBucketCommand({ Bucket: 'empty' }));
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'history', VersioningConfiguration: { Status: 'Enabled' } }));
    for (const key of ['a.jpg', 'b.jpg', 'dir/c.jpg']) await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: key, Body: Buffer.alloc(1000 + key.length) }));
    for (const body of ['one', 'two two', 'three three three']) await s3.send(new PutObjectCommand({ Bucket: 'history', Key: 'doc.txt', Body: body }));
    await s3.send(new PutObjectCommand({ Bucket: 'history', Key: 'gone.txt', Body: 'bye' }));
    await s3.send(new DeleteObjectCommand({ Bucket: 'history', Key: 'gone.txt' }));

    const before = await admin(server.url, 'GET', usagePath);
    expect(before.status).toBe(200);
    fitsSchema(usagePath, before.body);

    const status = await scanned();
    fitsSchema(usagePath, status);
    const expected = [await listed('empty'), await listed('history'), await listed('photos')];
    expect(status.last.buckets).toEqual(expected);
    expect(expected[1]).toMatchObject({ objects: 1, versions: 4, deleteMarkers: 1 });
    expect(status.last.total).toEqual({
      buckets: 3,
      objects: 4,
      versions: 7,
      deleteMarkers: 1,
      sizeBytes: expected.reduce((sum, row) => sum + row.sizeBytes, 0),
      currentSizeBytes: expected.reduce((sum, row) => sum + row.currentSizeBytes, 0),
    });
    expect(status.ageSeconds).toBeGreaterThanOrEqual(0);

    const { ok, rc } = rcIn(() => home);
    await ok('alias', 'set', 'local', server.url, testCredentials.accessKeyId, testCredentials.secretAccessKey);
    const shown = await ok('du', 'local');
    expect(shown).toMatch(/^data usage as of \S+ \(\d+ s ago\)/);
    expect(shown).toMatch(/BUCKET\s+OBJECTS\s+VERSIONS\s+DELETE MARKERS\s+CURRENT SIZE\s+ALL VERSIONS/);
    expect(shown).toMatch(/history\s+1\s+4\s+1\s+17 B\s+30 B/);
    expect(shown).toMatch(/TOTAL \(3 buckets\)\s+4\s+7\s+1/);
    const one = JSON.parse(await ok('du', 'local/history', '--json'));
    expect(one.usage).toEqual(expected[1]);
    const missing = await rc('du', 'local/nosuch');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("bucket 'nosuch' is not in the last data-usage scan");
    expect((await rc('du', 'local/a/b')).code).toBe(2);

    const metrics = parseExposition(await (await fetch(`${server.url}/svc/metrics/node`)).text());
    expect(sampleValue(metrics, 'svc_usage_bucket_objects', { bucket: 'photos' })).toBe(3);
    expect(sampleValue(metrics, 'svc_usage_bucket_versions', { bucket: 'history' })).toBe(4);
    expect(sampleValue(metrics, 'svc_usage_bucket_delete_markers', { bucket: 'history' })).toBe(1);
    expect(sampleValue(metrics, 'svc_usage_objects')).toBe(4);
    expect(sampleValue(metrics, 'svc_usage_buckets')).toBe(3);

    // A user without admin:DataUsageInfo: refused, and no scan starts.
    const created = await admin(server.url, 'POST', '/svc/admin/v4/iam/user/add', '', { body: JSON.stringify({ accessKey: 'viewer', secretKey: 'viewer-secret-1', policies: ['readonly'] }) });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const viewer = { accessKeyId: 'viewer', secretAccessKey: 'viewer-secret-1' };
    for (const [method, path] of [['GET', usagePath], ['POST', `${usagePath}/scan`]] as const) {
      const refused = await admin(server.url, method, path, '', { credentials: viewer });
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ Code: 'AccessDenied' });
      expect(refused.body.Message).toContain('admin:DataUsageInfo');
    }
    const after = await admin(server.url, 'GET', usagePath);
    expect(after.body.last.startedAt).toBe(status.last.startedAt);
    expect(after.body.current).toBeNull();
  }, 120_000);

  it('keeps the last result across a restart, with its age', async () => {
    const before = (await admin(server.url, 'GET', usagePath)).body;
    await server.kill();
    server = await startSvc({ args: args(), env });
    s3 = s3ClientFor(server.url);
    const after = (await admin(server.url, 'GET', usagePath)).body;
    expect(after.last).toEqual(before.last);
    expect(after.ageSeconds).toBeGreaterThanOrEqual(before.ageSeconds);
    // A new bucket appears at the next scan.
    await s3.send(new CreateBucketCommand({ Bucket: 'later' }));
    const rescanned = await scanned();
    expect(rescanned.last.buckets.map((row: { bucket: string }) => row.bucket)).toEqual(['empty', 'history', 'later', 'photos']);
  }, 120_000);
});
