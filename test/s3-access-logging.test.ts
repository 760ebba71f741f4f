/**
 * Server access logging through the AWS SDK, boto3-free raw HTTP and a restart: Put/GetBucketLogging
 * with their refusals (a missing target, a target whose policy denies the logging service, target
 * grants on a BucketOwnerEnforced target, malformed bodies), records in S3's format written as
 * objects under the target prefix (simple and partitioned keys), and a restart that delivers what
 * was journaled before it, once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand, GetBucketLoggingCommand, GetObjectCommand, ListObjectsV2Command, PutBucketLoggingCommand, PutBucketPolicyCommand, PutObjectCommand,
  type BucketLoggingStatus, type S3Client,
} from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { sdkErrorOf } from './helpers/codes.js';
import { signedRequest } from './helpers/raw-s3.js';

let root: string;
let server: SvcProcess;
let s3: S3Client;
const drives = (): string => join(root, 'd{1...4}');
const fastFlush = { SVC_CONSOLE_ENABLE: 'false', SVC_ACCESS_LOG_FLUSH_INTERVAL_MS: '200' };

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-access-log-'));
  server = await startSvc({ args: [drives()], env: fastFlush });
  s3 = s3ClientFor(server.url);
  for (const Bucket of ['source', 'logs', 'enforced-logs']) await s3.send(new CreateBucketCommand({ Bucket }));
  await s3.send(new CreateBucketCommand({ Bucket: 'acl-logs', ObjectOwnership: 'ObjectWriter' }));
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

const putLogging = (Bucket: string, status: BucketLoggingStatus): Promise<unknown> => s3.send(new PutBucketLoggingCommand({ Bucket, BucketLoggingStatus: status }));

/** Every log line under the prefix, polled until `done` holds of them (no fixed sleeps). */
async function logLines(prefix: string, done: (lines: string[]) => boolean): Promise<{ keys: string[]; lines: string[] }> {
  for (let attempt = 0; ; attempt += 1) {
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'logs', Prefix: prefix }));
    const keys = (listed.Contents ?? []).map((item) => item.Key!);
    const lines: string[] = [];
    for (const Key of keys) lines.push(...(await (await s3.send(new GetObjectCommand({ Bucket: 'logs', Key }))).Body!.transformToString()).split('\n').filter((line) => line !== ''));
    if (done(lines)) return { keys, lines };
    if (attempt > 200) throw new Error(`log lines under ${prefix} never arrived; seen:\n${lines.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('bucket logging configuration', () => {
  it('is off until put; a put reads back with its key format; an empty status turns it off', async () => {
    expect((await s3.send(new GetBucketLoggingCommand({ Bucket: 'source' }))).LoggingEnabled).toBeUndefined();
    await putLogging('source', { LoggingEnabled: { TargetBucket: 'logs', TargetPrefix: 'simple/', TargetObjectKeyFormat: { SimplePrefix: {} } } });
    const got = await s3.send(new GetBucketLoggingCommand({ Bucket: 'source' }));
    expect(got.LoggingEnabled).toMatchObject({ TargetBucket: 'logs', TargetPrefix: 'simple/', TargetObjectKeyFormat: { SimplePrefix: {} } });
    await putLogging('source', {});
    expect((await s3.send(new GetBucketLoggingCommand({ Bucket: 'source' }))).LoggingEnabled).toBeUndefined();
    await putLogging('source', { LoggingEnabled: { TargetBucket: 'logs', TargetPrefix: 'simple/', TargetObjectKeyFormat: { PartitionedPrefix: { PartitionDateSource: 'DeliveryTime' } } } });
    expect((await s3.send(new GetBucketLoggingCommand({ Bucket: 'source' }))).LoggingEnabled?.TargetObjectKeyFormat).toEqual({ PartitionedPrefix: { PartitionDateSource: 'DeliveryTime' } });
    await putLogging('source', {});
  });

  it('refuses a missing target, a target denying the logging service, target grants under BucketOwnerEnforced, and bad bodies; nothing changes', async () => {
    expect(await sdkErrorOf(putLogging('source', { LoggingEnabled: { TargetBucket: 'no-such-target', TargetPrefix: 'x/' } }))).toEqual({ name: 'InvalidTargetBucketForLogging', status: 400 });
    await s3.send(new PutBucketPolicyCommand({ Bucket: 'enforced-logs', Policy: JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Deny', Principal: { Service: 'logging.s3.amazonaws.com' }, Action: 's3:PutObject', Resource: 'arn:aws:s3:::enforced-logs/*' }] }) }));
    expect(await sdkErrorOf(putLogging('source', { LoggingEnabled: { TargetBucket: 'enforced-logs', TargetPrefix: 'x/' } }))).toEqual({ name: 'InvalidTargetBucketForLogging', status: 400 });
    const grants = [{ Grantee: { Type: 'Group' as const, URI: 'http://acs.amazonaws.com/groups/global/AllUsers' }, Permission: 'READ' as const }];
    expect(await sdkErrorOf(putLogging('source', { LoggingEnabled: { TargetBucket: 'logs', TargetPrefix: 'x/', TargetGrants: grants } }))).toEqual({ name: 'InvalidTargetBucketForLogging', status: 400 });
    // Where ACLs count, target grants are kept and returned.
    await putLogging('source', { LoggingEnabled: { TargetBucket: 'acl-logs', TargetPrefix: 'x/', TargetGrants: grants } });
    expect((await s3.send(new GetBucketLoggingCommand({ Bucket: 'source' }))).LoggingEnabled?.TargetGrants).toEqual(grants);
    for (const body of ['<BucketLoggingStatus><LoggingEnabled><TargetPrefix>x/</TargetPrefix></LoggingEnabled></BucketLoggingStatus>', '<Other/>', 'not xml']) {
      const answer = await signedRequest(server.url, { method: 'PUT', path: '/source', query: { logging: '' }, body });
      expect([answer.status, answer.body]).toEqual([400, expect.stringContaining('<Code>MalformedXML</Code>')]);
    }
    expect((await s3.send(new GetBucketLoggingCommand({ Bucket: 'source' }))).LoggingEnabled?.TargetBucket).toBe('acl-logs');
    await putLogging('source', {});
  });
});

describe('server access log records', () => {
  it('are written under the target prefix in S3\'s format, refusals included', async () => {
    await putLogging('source', { LoggingEnabled: { TargetBucket: 'logs', TargetPrefix: 'access/' } });
    await s3.send(new PutObjectCommand({ Bucket: 'source', Key: 'a b.txt', Body: 'hello' }));
    await (await s3.send(new GetObjectCommand({ Bucket: 'source', Key: 'a b.txt' }))).Body!.transformToString();
    expect((await fetch(`${server.url}/source/a%20b.txt`, { headers: { 'user-agent': 'anonymous "reader"' } })).status).toBe(403);
    const { keys, lines } = await logLines('access/', (seen) => seen.length >= 3);
    for (const key of keys) expect(key).toMatch(/^access\/\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d-\S+$/);
    const owner = testCredentials.accessKeyId;
    const time = String.raw`\[\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d \+0000\]`;
    const host = new URL(server.url).host;
    const put = lines.find((line) => line.includes('REST.PUT.OBJECT'));
    expect(put).toMatch(new RegExp(String.raw`^${owner} source ${time} 127\.0\.0\.1 ${owner} \S+ REST\.PUT\.OBJECT a%20b\.txt "PUT /source/a%20b\.txt\S* HTTP/1\.1" 200 - - 5 \d+ \d+ "-" "[^"]*" - \S+ SigV4 - AuthHeader ${host.replace(/\./g, '\\.')} - - -$`));
    expect(lines.find((line) => line.includes('REST.GET.OBJECT') && line.includes(' 200 '))).toMatch(/ 200 - 5 5 \d+ \d+ "-" /);
    expect(lines.find((line) => line.includes(' 403 '))).toMatch(new RegExp(String.raw`^${owner} source ${time} 127\.0\.0\.1 - \S+ REST\.GET\.OBJECT a%20b\.txt "GET /source/a%20b\.txt HTTP/1\.1" 403 AccessDenied \S+ - \d+ \d+ "-" "anonymous \\"reader\\"" - \S+ - - - `));
  });

  it('turn-around time is at most the total time; aclRequired is Yes only where an ACL grant alone allowed the request', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'acl-source', ObjectOwnership: 'ObjectWriter' }));
    await putLogging('acl-source', { LoggingEnabled: { TargetBucket: 'logs', TargetPrefix: 'acl/' } });
    await s3.send(new PutObjectCommand({ Bucket: 'acl-source', Key: 'public.txt', Body: 'for everyone', ACL: 'public-read' }));
    expect((await fetch(`${server.url}/acl-source/public.txt`)).status).toBe(200);
    const { lines } = await logLines('acl/', (seen) => seen.some((line) => line.includes('REST.GET.OBJECT')) && seen.some((line) => line.includes('REST.PUT.OBJECT')));
    const fields = (line: string): string[] => line.replace(/"(?:[^"\\]|\\.)*"/g, 'Q').replace(/\[[^\]]*\]/g, 'T').split(' ');
    for (const line of lines) {
      const [total, turnAround] = [Number(fields(line)[13]), Number(fields(line)[14])];
      expect(turnAround, line).toBeGreaterThanOrEqual(0);
      expect(turnAround, line).toBeLessThanOrEqual(total);
    }
    expect(lines.find((line) => line.includes('REST.GET.OBJECT'))).toMatch(/ Yes$/);
    expect(lines.find((line) => line.includes('REST.PUT.OBJECT'))).toMatch(/ -$/);
  });

  it('partitioned keys name the owner, region, source bucket and date', async () => {
    await putLogging('source', { LoggingEnabled: { TargetBucket: 'logs', TargetPrefix: 'parts/', TargetObjectKeyFormat: { PartitionedPrefix: { PartitionDateSource: 'EventTime' } } } });
    await s3.send(new PutObjectCommand({ Bucket: 'source', Key: 'partitioned', Body: 'p' }));
    const { keys } = await logLines('parts/', (seen) => seen.some((line) => line.includes(' partitioned ')));
    for (const key of keys) expect(key).toMatch(new RegExp(String.raw`^parts/${testCredentials.accessKeyId}/us-east-1/source/\d{4}/\d\d/\d\d/\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d-\S+$`));
  });

  it('a restart delivers what was journaled before it, once', async () => {
    await putLogging('source', { LoggingEnabled: { TargetBucket: 'logs', TargetPrefix: 'restart/' } });
    const port = server.port;
    await server.stop();
    // A flush interval far longer than the test: nothing is delivered before the stop.
    server = await startSvc({ args: [drives()], port, env: { ...fastFlush, SVC_ACCESS_LOG_FLUSH_INTERVAL_MS: '3600000' } });
    s3 = s3ClientFor(server.url);
    const keys = Array.from({ length: 5 }, (_, index) => `journaled-${index}`);
    for (const Key of keys) await s3.send(new PutObjectCommand({ Bucket: 'source', Key, Body: Key }));
    expect((await s3.send(new ListObjectsV2Command({ Bucket: 'logs', Prefix: 'restart/' }))).KeyCount ?? 0).toBe(0);
    await server.stop();
    server = await startSvc({ args: [drives()], port, env: fastFlush });
    s3 = s3ClientFor(server.url);
    const { lines } = await logLines('restart/', (seen) => keys.every((key) => seen.some((line) => line.includes(` ${key} `))));
    for (const key of keys) expect(lines.filter((line) => line.includes(`REST.PUT.OBJECT ${key} `)), key).toHaveLength(1);
  }, 60_000);
});
