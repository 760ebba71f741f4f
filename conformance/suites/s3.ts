/**
 * Black-box S3 semantics checks, each tagged with the SPEC.md section or S3 operation it verifies.
 * `s3.*` checks hold only AWS-documented behaviour and name their source; the `svc.*` checks here
 * are SPEC.md's own rules for the S3 listener (the svc profile).
 */
import { createHash } from 'node:crypto';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '@aws-crypto/sha256-js';
import { CheckFailure, errorOf, expectThat, type Check, type Target } from '../runner/check.js';
import { checkKeyNamespace } from '../checkers/key-namespace.js';
import { bucketChecks } from './s3/buckets.js';
import { objectChecks } from './s3/objects.js';
import { readChecks } from './s3/reads.js';
import { copyMultipartChecks } from './s3/copy-multipart.js';
import { versionListingChecks } from './s3/versions-listing.js';
import { authChecksumChecks } from './s3/auth-checksums.js';
import { objectLockChecks } from './s3/object-lock.js';
import { lifecycleChecks } from './s3/lifecycle.js';
import { awsApiPage, withSources } from './s3/sources.js';
import { recentChecks } from './s3/recent.js';
import { aclLoggingChecks } from './s3/acl-logging.js';
import { overTimeChecks } from './s3/over-time.js';
import { encryptionChecks } from './s3/encryption.js';
import { roundThreeChecks } from './s3/round-three.js';
import { formPolicyGrantChecks } from './s3/forms-policies-grants.js';

const md5 = (bytes: Uint8Array | string) => createHash('md5').update(bytes).digest('hex');

async function bodyOf(target: Target, bucket: string, key: string, versionId?: string): Promise<Uint8Array> {
  const object = await target.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId }));
  return object.Body!.transformToByteArray();
}

const coreChecks: Check[] = [
  {
    id: 'svc.health',
    spec: 'Endpoints',
    title: 'GET /health and /health/ready answer 200 on the S3 listener',
    async run(target) {
      for (const path of ['/health', '/health/ready']) {
        const response = await fetch(`${target.options.endpoint}${path}`);
        expectThat(response.status === 200, `${path} answered ${response.status}`);
      }
    },
  },
  {
    id: 's3.storage-class.accept',
    spec: 'Storage classes',
    title: 'STANDARD and REDUCED_REDUNDANCY are accepted on PUT, and HEAD reports the class',
    async run(target) {
      const bucket = await target.makeBucket('classes');
      for (const storageClass of ['STANDARD', 'REDUCED_REDUNDANCY'] as const) {
        await target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: storageClass, Body: 'x'.repeat(1000), StorageClass: storageClass }));
        const head = await target.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: storageClass }));
        const reported = head.StorageClass ?? 'STANDARD';
        expectThat(reported === storageClass, `an object written as ${storageClass} is reported as ${reported}`);
      }
    },
  },
  {
    id: 'svc.storage-class.reject',
    spec: 'Storage classes',
    title: 'any other class is refused with InvalidStorageClass on PUT, CopyObject and CreateMultipartUpload, storing nothing',
    async run(target) {
      const bucket = await target.makeBucket('badclass');
      await target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'source', Body: 'source' }));
      const put = await errorOf(target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'glacier', Body: 'x', StorageClass: 'GLACIER' })));
      expectThat(put.name === 'InvalidStorageClass', `PUT with GLACIER answered ${put.name}`);
      const head = await errorOf(target.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'glacier' })));
      expectThat(head.name === 'NotFound' || head.status === 404, 'a refused PUT left an object behind');
      const copy = await errorOf(target.s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copy', CopySource: `${bucket}/source`, StorageClass: 'DEEP_ARCHIVE' })));
      expectThat(copy.name === 'InvalidStorageClass', `CopyObject with DEEP_ARCHIVE answered ${copy.name}`);
      const upload = await errorOf(target.s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'mp', StorageClass: 'ONEZONE_IA' })));
      expectThat(upload.name === 'InvalidStorageClass', `CreateMultipartUpload with ONEZONE_IA answered ${upload.name}`);
    },
  },
  {
    id: 's3.read-after-write',
    spec: 'What the service does',
    title: 'every acknowledged write reads back byte for byte at once, overwrites included, at random sizes',
    async run(target) {
      const bucket = await target.makeBucket('raw');
      const sizes = [0, 1, 4096, 300_000, 1024 * 1024 + 1, 3 * 1024 * 1024 + target.prng.int(1000)];
      for (const [index, size] of sizes.entries()) {
        const bytes = Buffer.alloc(size);
        for (let offset = 0; offset < size; offset += 4096) bytes[offset] = target.prng.int(256);
        await target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: `k${index}`, Body: bytes }));
        expectThat(md5(await bodyOf(target, bucket, `k${index}`)) === md5(bytes), `${size} bytes did not read back identical`);
      }
      await target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'k1', Body: 'overwritten' }));
      expectThat(Buffer.from(await bodyOf(target, bucket, 'k1')).toString() === 'overwritten', 'an overwrite was not visible to the next read');
    },
  },
  {
    id: 's3.listing.order-and-paging',
    spec: 'Startup configuration (listing)',
    title: 'paging through a listing returns every key exactly once, in UTF-8 byte order',
    async run(target) {
      const bucket = await target.makeBucket('listing');
      const keys = new Set<string>();
      const alphabet = ['a', 'b', 'Z', '0', '-', 'é', '日', '~', '!'];
      const segment = () => Array.from({ length: 1 + target.prng.int(4) }, () => alphabet[target.prng.int(alphabet.length)]).join('');
      while (keys.size < 60) keys.add(Array.from({ length: 1 + target.prng.int(3) }, segment).join('/'));
      for (const key of keys) await target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: key }));
      const seen: string[] = [];
      let token: string | undefined;
      do {
        const page = await target.s3.send(new ListObjectsV2Command({ Bucket: bucket, MaxKeys: 7, ContinuationToken: token }));
        for (const object of page.Contents ?? []) seen.push(object.Key!);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      const expected = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      expectThat(seen.length === expected.length, `${seen.length} keys listed, ${expected.length} written`);
      expectThat(seen.every((key, index) => key === expected[index]), `listing order differs from UTF-8 byte order near '${seen.find((key, index) => key !== expected[index])}'`);
    },
  },
  {
    id: 's3.versioning.delete-markers',
    spec: 'Versioning',
    title: 'versions get ids, DELETE adds a delete marker, older versions stay readable by id',
    needs: ['versioning'],
    async run(target) {
      const bucket = await target.makeBucket('versions');
      await target.s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
      const first = await target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'doc', Body: 'first' }));
      const second = await target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'doc', Body: 'second' }));
      expectThat(first.VersionId && second.VersionId && first.VersionId !== second.VersionId && first.VersionId !== 'null', 'versioned PUTs did not get distinct version ids');
      const removed = await target.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'doc' }));
      expectThat(removed.DeleteMarker === true, 'DELETE without a version id did not add a delete marker');
      const get = await errorOf(target.s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'doc' })));
      expectThat(get.name === 'NoSuchKey', `GET after the delete marker answered ${get.name}`);
      expectThat(Buffer.from(await bodyOf(target, bucket, 'doc', first.VersionId)).toString() === 'first', 'the first version is not readable by its id');
      const listing = await target.s3.send(new ListObjectVersionsCommand({ Bucket: bucket }));
      expectThat((listing.Versions ?? []).length === 2 && (listing.DeleteMarkers ?? []).length === 1, 'ListObjectVersions does not show two versions and one delete marker');
      expectThat(listing.DeleteMarkers?.[0]?.IsLatest === true, 'the delete marker is not the latest version');
    },
  },
  {
    id: 's3.multipart.commit-rules',
    spec: 'Limits (multipart)',
    title: 'an uploaded part is not an object; parts under 5 MiB but the last are refused at completion; the ETag is md5-of-md5s-N',
    needs: ['multipart'],
    async run(target) {
      const bucket = await target.makeBucket('multipart');
      const small = await target.s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'small' }));
      const parts = [];
      for (const number of [1, 2]) parts.push((await target.s3.send(new UploadPartCommand({ Bucket: bucket, Key: 'small', UploadId: small.UploadId, PartNumber: number, Body: Buffer.alloc(1024, number) }))).ETag!);
      const visible = await errorOf(target.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'small' })));
      expectThat(visible.status === 404, 'an uploaded part is visible as an object before completion');
      const tooSmall = await errorOf(target.s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'small', UploadId: small.UploadId, MultipartUpload: { Parts: parts.map((ETag, index) => ({ ETag, PartNumber: index + 1 })) } })));
      expectThat(tooSmall.name === 'EntityTooSmall', `completing with a 1 KiB first part answered ${tooSmall.name}`);
      const wrongPart = await errorOf(target.s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'small', UploadId: small.UploadId, MultipartUpload: { Parts: [{ ETag: '"00000000000000000000000000000000"', PartNumber: 1 }] } })));
      expectThat(wrongPart.name === 'InvalidPart', `completing with an unknown part ETag answered ${wrongPart.name}`);
      const good = await target.s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'good' }));
      const first = Buffer.alloc(5 * 1024 * 1024, 1);
      const last = Buffer.alloc(1000, 2);
      const etags = [];
      for (const [index, body] of [first, last].entries()) etags.push((await target.s3.send(new UploadPartCommand({ Bucket: bucket, Key: 'good', UploadId: good.UploadId, PartNumber: index + 1, Body: body }))).ETag!);
      const done = await target.s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'good', UploadId: good.UploadId, MultipartUpload: { Parts: etags.map((ETag, index) => ({ ETag, PartNumber: index + 1 })) } }));
      const expectedEtag = `"${createHash('md5').update(Buffer.concat([first, last].map((part) => createHash('md5').update(part).digest()))).digest('hex')}-2"`;
      expectThat(done.ETag === expectedEtag, `multipart ETag ${done.ETag}, expected ${expectedEtag}`);
      expectThat(md5(await bodyOf(target, bucket, 'good')) === md5(Buffer.concat([first, last])), 'the completed object does not read back as its parts');
    },
  },
  {
    id: 's3.presigned.expiry',
    spec: 'Authentication',
    title: 'a presigned GET works until it expires and is refused afterwards',
    source: awsApiPage('sigv4-query-string-auth'),
    needs: ['presigned'],
    async run(target) {
      const bucket = await target.makeBucket('presign');
      await target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'shared', Body: 'presigned body' }));
      const url = new URL(target.options.endpoint);
      const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials: { accessKeyId: target.options.accessKey, secretAccessKey: target.options.secretKey }, sha256: Sha256, uriEscapePath: false });
      const presign = async (signingDate: Date, expiresIn: number) => {
        const signed = await signer.presign({ method: 'GET', protocol: url.protocol, hostname: url.hostname, port: url.port ? Number(url.port) : undefined, path: `/${bucket}/shared`, headers: { host: url.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }, query: {} }, { expiresIn, signingDate });
        return `${url.origin}${signed.path}?${new URLSearchParams(Object.entries(signed.query ?? {}).map(([name, value]): [string, string] => [name, String(value)])).toString()}`;
      };
      const fresh = await fetch(await presign(new Date(), 300));
      expectThat(fresh.status === 200 && (await fresh.text()) === 'presigned body', `a fresh presigned GET answered ${fresh.status}`);
      const expired = await fetch(await presign(new Date(Date.now() - 3_600_000), 60));
      expectThat(expired.status === 403, `a presigned GET that expired an hour ago answered ${expired.status}`);
    },
  },
  {
    id: 's3.auth.bad-signature',
    spec: 'Authentication',
    title: 'a request signed with the wrong secret is refused with SignatureDoesNotMatch and writes nothing',
    async run(target) {
      const bucket = await target.makeBucket('auth');
      const forged = await errorOf(target.clientWith(`${target.options.secretKey}-wrong`).send(new PutObjectCommand({ Bucket: bucket, Key: 'forged', Body: 'x' })));
      expectThat(forged.name === 'SignatureDoesNotMatch', `a forged signature answered ${forged.name}`);
      const head = await errorOf(target.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'forged' })));
      expectThat(head.status === 404, 'a refused PUT left an object behind');
    },
  },
  {
    id: 's3.keys.namespace',
    spec: 'Resources and their fields',
    title: 'every key (UUID segments, xl.meta, part.N, __XLDIR__, trailing slashes, unicode) is stored, listed, read and deleted on its own',
    async run(target) {
      const bucket = await target.makeBucket('keys');
      try {
        await checkKeyNamespace({ s3: target.s3, bucket, seed: target.options.seed, numRuns: 8, largeBodyBytes: 300 * 1024 });
      } catch (error) {
        throw new CheckFailure((error as Error).message);
      }
    },
  },
  {
    id: 'svc.keys.unstorable',
    spec: 'Errors',
    title: 'a key the store cannot hold is refused with a 400 on every operation, never a 5xx, and nothing stored changes',
    async run(target) {
      const bucket = await target.makeBucket('badkeys');
      await target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'obj', Body: 'kept' }));
      for (const key of [`a/${'s'.repeat(256)}`, '../../x', 'a/../obj', 'a//b']) {
        for (const [name, send] of [
          ['PUT', () => target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'x' }))],
          ['GET', () => target.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))],
          ['HEAD', () => target.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))],
          ['DELETE', () => target.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }))],
          ['COPY', () => target.s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copy', CopySource: `${bucket}/${key}` }))],
        ] as const) {
          const answer = await errorOf(send());
          expectThat(answer.status === undefined || answer.status < 500, `${name} of ${JSON.stringify(key.slice(0, 40))} answered ${answer.name} (${answer.status})`);
        }
      }
      expectThat(new TextDecoder().decode(await bodyOf(target, bucket, 'obj')) === 'kept', 'an object changed after requests on keys that cannot be stored');
    },
  },
];

export const s3Checks: Check[] = withSources([...coreChecks, ...bucketChecks, ...objectChecks, ...readChecks, ...copyMultipartChecks, ...versionListingChecks, ...authChecksumChecks, ...objectLockChecks, ...lifecycleChecks, ...recentChecks, ...aclLoggingChecks, ...overTimeChecks, ...encryptionChecks, ...roundThreeChecks, ...formPolicyGrantChecks]);
