/** Bucket operations: create, head, list, location, delete, and the bucket naming rules. */
import { CreateBucketCommand, DeleteBucketCommand, GetBucketLocationCommand, HeadBucketCommand, ListBucketsCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { errorOf, expectThat, type Check } from '../../runner/check.js';
import { expectError, expectRawError, put, textOf } from './support.js';
import { awsApi, awsGuide, s3Tests } from './sources.js';

/** Names AWS refuses, each with the rule it breaks (and the ceph/s3-tests case, for rules AWS's current page leaves out). */
const invalidNames: [string, string, string?][] = [
  ['ab', 'shorter than 3 characters'],
  ['a'.repeat(64), 'longer than 63 characters'],
  ['Upper-case', 'upper-case letters'],
  ['under_score', 'an underscore'],
  ['-leading-hyphen', 'a leading hyphen'],
  ['trailing-hyphen-', 'a trailing hyphen'],
  ['two..dots', 'two adjacent dots'],
  ['192.168.5.4', 'the form of an IP address'],
  ['xn--prefixed', 'the reserved xn-- prefix'],
  ['bucket-s3alias', 'the reserved -s3alias suffix'],
  ['dot.-hyphen', 'a dot next to a hyphen', s3Tests('test_bucket_create_naming_dns_dot_dash')],
];

const nameChecks: Check[] = invalidNames.map(([name, rule, source]) => ({
  id: `s3.bucket.name.${rule.replace(/[^a-z0-9]+/gi, '-').replace(/-$/, '').toLowerCase()}`,
  spec: 'S3 CreateBucket',
  title: `a bucket name with ${rule} is refused with InvalidBucketName and no bucket is made`,
  source: source ?? awsGuide('bucketnamingrules'),
  async run(target) {
    const answer = await target.raw({ method: 'PUT', path: `/${name}` });
    expectRawError(answer, 400, 'InvalidBucketName', `CreateBucket '${name}'`);
    const listed = (await target.s3.send(new ListBucketsCommand({}))).Buckets ?? [];
    expectThat(!listed.some((bucket) => bucket.Name === name), `a refused bucket '${name}' is listed`);
  },
}));

export const bucketChecks: Check[] = [
  {
    id: 's3.bucket.create-head-list',
    spec: 'S3 CreateBucket',
    title: 'a created bucket answers HEAD 200 and is listed with a creation date',
    async run(target) {
      const bucket = await target.makeBucket('created');
      await target.s3.send(new HeadBucketCommand({ Bucket: bucket }));
      const listed = ((await target.s3.send(new ListBucketsCommand({}))).Buckets ?? []).find((entry) => entry.Name === bucket);
      expectThat(listed, 'the new bucket is not in ListBuckets');
      expectThat(listed.CreationDate instanceof Date && Math.abs(listed.CreationDate.getTime() - Date.now()) < 15 * 60_000, `creation date ${String(listed.CreationDate)} is not about now`);
    },
  },
  {
    id: 's3.bucket.create-twice',
    spec: 'S3 CreateBucket',
    title: 'creating one\'s own bucket again answers 200 in us-east-1 (the region HeadBucket names, or none) and 409 BucketAlreadyOwnedByYou in any other region, and keeps its objects',
    source: `${awsApi('CreateBucket')}; ${awsApi('HeadBucket')}; ${s3Tests('test_bucket_create_exists')}`,
    async run(target) {
      const bucket = await target.makeBucket('twice');
      await put(target, bucket, 'kept', 'kept');
      // AWS: in us-east-1 (where these requests are signed) the owner's re-creation succeeds; elsewhere it is BucketAlreadyOwnedByYou.
      const region = (await target.raw({ method: 'HEAD', path: `/${bucket}` })).headers['x-amz-bucket-region'] ?? 'us-east-1';
      const again = await errorOf(target.s3.send(new CreateBucketCommand({ Bucket: bucket })));
      const answered = `${again.name}${again.status ? ` (${again.status})` : ''}`;
      if (region === 'us-east-1') expectThat(again.name === 'no error', `a second CreateBucket by the owner in us-east-1 answered ${answered}, expected 200`);
      else expectThat(again.name === 'BucketAlreadyOwnedByYou' && again.status === 409, `a second CreateBucket by the owner in ${region} answered ${answered}, expected 409 BucketAlreadyOwnedByYou`);
      expectThat((await textOf(target, bucket, 'kept')) === 'kept', 'the object in the bucket changed');
    },
  },
  ...nameChecks,
  {
    id: 's3.bucket.head-missing',
    spec: 'S3 HeadBucket',
    title: 'HEAD of a bucket that does not exist answers 404',
    async run(target) {
      const answer = await errorOf(target.s3.send(new HeadBucketCommand({ Bucket: target.bucketName('never-made') })));
      expectThat(answer.status === 404, `HEAD of a missing bucket answered ${answer.name} (${answer.status})`);
    },
  },
  {
    id: 's3.bucket.delete-missing',
    spec: 'S3 DeleteBucket',
    title: 'deleting a bucket that does not exist answers NoSuchBucket',
    async run(target) {
      await expectError(target.s3.send(new DeleteBucketCommand({ Bucket: target.bucketName('never-made') })), 'NoSuchBucket', 'DeleteBucket of a missing bucket', 404);
    },
  },
  {
    id: 's3.bucket.delete-not-empty',
    spec: 'S3 DeleteBucket',
    title: 'deleting a bucket that holds an object is refused with BucketNotEmpty and the object stays',
    async run(target) {
      const bucket = await target.makeBucket('full');
      await put(target, bucket, 'inside', 'inside');
      await expectError(target.s3.send(new DeleteBucketCommand({ Bucket: bucket })), 'BucketNotEmpty', 'DeleteBucket of a bucket with an object', 409);
      expectThat((await textOf(target, bucket, 'inside')) === 'inside', 'the object is gone after a refused DeleteBucket');
    },
  },
  {
    id: 's3.bucket.delete-empty',
    spec: 'S3 DeleteBucket',
    title: 'an empty bucket is deleted: HEAD then answers 404 and ListBuckets no longer shows it',
    async run(target) {
      const bucket = await target.makeBucket('doomed');
      await put(target, bucket, 'gone', 'x');
      await target.s3.send(new (await import('@aws-sdk/client-s3')).DeleteObjectCommand({ Bucket: bucket, Key: 'gone' }));
      await target.dropBucket(bucket);
      const head = await errorOf(target.s3.send(new HeadBucketCommand({ Bucket: bucket })));
      expectThat(head.status === 404, `HEAD of a deleted bucket answered ${head.name}`);
      const listed = (await target.s3.send(new ListBucketsCommand({}))).Buckets ?? [];
      expectThat(!listed.some((entry) => entry.Name === bucket), 'a deleted bucket is still listed');
    },
  },
  {
    id: 's3.bucket.location',
    spec: 'S3 GetBucketLocation',
    title: 'GetBucketLocation answers a region (empty means us-east-1)',
    async run(target) {
      const bucket = await target.makeBucket('location');
      const answer = await target.s3.send(new GetBucketLocationCommand({ Bucket: bucket }));
      expectThat(answer.LocationConstraint === undefined || typeof answer.LocationConstraint === 'string', 'GetBucketLocation did not answer a LocationConstraint');
      const missing = await errorOf(target.s3.send(new GetBucketLocationCommand({ Bucket: target.bucketName('never-made') })));
      expectThat(missing.name === 'NoSuchBucket', `GetBucketLocation of a missing bucket answered ${missing.name}`);
    },
  },
  {
    id: 's3.bucket.put-into-missing',
    spec: 'S3 PutObject',
    title: 'a PUT into a bucket that does not exist answers NoSuchBucket and creates no bucket',
    async run(target) {
      const bucket = target.bucketName('never-made');
      await expectError(target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'x' })), 'NoSuchBucket', 'PUT into a missing bucket', 404);
      const head = await errorOf(target.s3.send(new HeadBucketCommand({ Bucket: bucket })));
      expectThat(head.status === 404, 'a PUT into a missing bucket created it');
    },
  },
  {
    id: 's3.bucket.list-missing',
    spec: 'S3 ListObjectsV2',
    title: 'listing a bucket that does not exist answers NoSuchBucket',
    async run(target) {
      await expectError(target.s3.send(new ListObjectsV2Command({ Bucket: target.bucketName('never-made') })), 'NoSuchBucket', 'ListObjectsV2 of a missing bucket', 404);
    },
  },
];
