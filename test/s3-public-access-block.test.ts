/**
 * The public access block through the AWS SDK: put, get and delete it; BlockPublicPolicy refuses
 * a public bucket policy (and only a public one) and leaves the stored policy as it was;
 * RestrictPublicBuckets makes a public policy grant nothing to anonymous callers while users keep
 * what their own policies give them; malformed configurations are MalformedXML.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand, DeleteBucketPolicyCommand, DeletePublicAccessBlockCommand, GetBucketPolicyCommand, GetPublicAccessBlockCommand, PutBucketPolicyCommand,
  PutObjectCommand, PutPublicAccessBlockCommand, type S3Client,
} from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { signedRequest } from './helpers/raw-s3.js';
import { sdkErrorOf } from './helpers/codes.js';

let root: string;
let server: SvcProcess;
let s3: S3Client;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-public-block-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')] });
  s3 = s3ClientFor(server.url);
  await s3.send(new CreateBucketCommand({ Bucket: 'shared' }));
  await s3.send(new PutObjectCommand({ Bucket: 'shared', Key: 'page.html', Body: '<p>hello</p>' }));
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

const publicRead = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::shared/*' }] });
const fromOneAddress = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::shared/*', Condition: { IpAddress: { 'aws:SourceIp': '10.1.2.3/32' } } }] });
const block = (settings: Partial<Record<'BlockPublicAcls' | 'IgnorePublicAcls' | 'BlockPublicPolicy' | 'RestrictPublicBuckets', boolean>>): Promise<unknown> =>
  s3.send(new PutPublicAccessBlockCommand({ Bucket: 'shared', PublicAccessBlockConfiguration: settings }));
const anonymousGet = async (): Promise<number> => (await fetch(`${server.url}/shared/page.html`)).status;

describe('the public access block', () => {
  it('is absent until put, returned with every setting, and removed by delete', async () => {
    expect(await sdkErrorOf(s3.send(new GetPublicAccessBlockCommand({ Bucket: 'shared' })))).toEqual({ name: 'NoSuchPublicAccessBlockConfiguration', status: 404 });
    await block({ BlockPublicAcls: true, RestrictPublicBuckets: true });
    const got = await s3.send(new GetPublicAccessBlockCommand({ Bucket: 'shared' }));
    expect(got.PublicAccessBlockConfiguration).toEqual({ BlockPublicAcls: true, IgnorePublicAcls: false, BlockPublicPolicy: false, RestrictPublicBuckets: true });
    await s3.send(new DeletePublicAccessBlockCommand({ Bucket: 'shared' }));
    expect(await sdkErrorOf(s3.send(new GetPublicAccessBlockCommand({ Bucket: 'shared' })))).toMatchObject({ name: 'NoSuchPublicAccessBlockConfiguration' });
    expect(await sdkErrorOf(s3.send(new GetPublicAccessBlockCommand({ Bucket: 'no-such-bucket' })))).toEqual({ name: 'NoSuchBucket', status: 404 });
  });

  it('BlockPublicPolicy refuses a public policy, keeps the stored one, and lets a non-public one in', async () => {
    await s3.send(new PutBucketPolicyCommand({ Bucket: 'shared', Policy: fromOneAddress }));
    await block({ BlockPublicPolicy: true });
    expect(await sdkErrorOf(s3.send(new PutBucketPolicyCommand({ Bucket: 'shared', Policy: publicRead })))).toEqual({ name: 'AccessDenied', status: 403 });
    expect((await s3.send(new GetBucketPolicyCommand({ Bucket: 'shared' }))).Policy).toBe(fromOneAddress);
    await s3.send(new PutBucketPolicyCommand({ Bucket: 'shared', Policy: fromOneAddress }));
    await s3.send(new DeletePublicAccessBlockCommand({ Bucket: 'shared' }));
    await s3.send(new PutBucketPolicyCommand({ Bucket: 'shared', Policy: publicRead }));
    await s3.send(new DeleteBucketPolicyCommand({ Bucket: 'shared' }));
  });

  it('RestrictPublicBuckets stops a public policy from serving anonymous readers, and lifting it serves them again', async () => {
    await s3.send(new PutBucketPolicyCommand({ Bucket: 'shared', Policy: publicRead }));
    expect(await anonymousGet()).toBe(200);
    await block({ RestrictPublicBuckets: true });
    expect(await anonymousGet()).toBe(403);
    await block({ RestrictPublicBuckets: false, BlockPublicAcls: true });
    expect(await anonymousGet()).toBe(200);
    await s3.send(new DeleteBucketPolicyCommand({ Bucket: 'shared' }));
    expect(await anonymousGet()).toBe(403);
  });

  it('malformed configurations are MalformedXML and change nothing', async () => {
    await block({ BlockPublicPolicy: true });
    const bodies = [
      '<PublicAccessBlockConfiguration><BlockPublicPolicy>yes</BlockPublicPolicy></PublicAccessBlockConfiguration>',
      '<PublicAccessBlockConfiguration><BlockEverything>true</BlockEverything></PublicAccessBlockConfiguration>',
      '<Other/>',
      'not xml',
    ];
    for (const body of bodies) {
      const answer = await signedRequest(server.url, { method: 'PUT', path: '/shared', query: { publicAccessBlock: '' }, body });
      expect(answer.status, body).toBe(400);
      expect(answer.body, body).toContain('<Code>MalformedXML</Code>');
    }
    expect((await s3.send(new GetPublicAccessBlockCommand({ Bucket: 'shared' }))).PublicAccessBlockConfiguration).toMatchObject({ BlockPublicPolicy: true });
  });
});
