/**
 * Server-side encryption as AWS documents it: SSE-S3 headers and ETags, bucket default encryption
 * (Put, Get, DeleteBucketEncryption), SSE-KMS under a key the run names, SSE-C round trips and the
 * errors of a missing, wrong or malformed customer key, SSE-C refused over plain HTTP, CopyObject
 * between encryption modes, multipart uploads with SSE-S3 and SSE-C (the key on every part), and
 * ranges of encrypted objects. Each check needs the modes it uses (the sse-s3, sse-kms and sse-c
 * capabilities); a target without them reports the check n/a with the probe's finding.
 *
 * Note that AWS encrypts every new object with SSE-S3 when nothing else is asked for, so no check
 * demands that an object stored without SSE headers be answered without them.
 */
import { expectThat, NotApplicable, Skip, type Check, type Target } from '../../runner/check.js';
import type { RawAnswer, RawRequest } from '../../runner/http.js';
import { bareKeyId, customerAlgorithmHeader, customerKeyHeaders, customerKeyMd5Header, keyMd5, kmsKeyIdHeader, sseHeader } from '../../runner/sse.js';
import { encodeKey, expectRawError, md5Hex, patterned } from './support.js';
import { awsApi, awsGuide, s3Tests } from './sources.js';

const sseS3Guide = awsGuide('UsingServerSideEncryption');
const sseKmsGuide = awsGuide('UsingKMSEncryption');
const sseCGuide = awsGuide('ServerSideEncryptionCustomerKeys');
const etagRules = awsApi('Object');
const MiB = 1024 * 1024;

const path = (bucket: string, key: string) => `/${bucket}/${encodeKey(key)}`;
const describe = (answer: RawAnswer) => `${answer.status}${answer.code ? ` ${answer.code}` : ''}`;
const quotedMd5 = (body: Buffer) => `"${md5Hex(body)}"`;
const sseS3 = { [sseHeader]: 'AES256' };

/** 32 key bytes drawn from the run's seed. */
const customerKey = (target: Target) => Buffer.from(Array.from({ length: 32 }, () => target.prng.int(256)));

async function send(target: Target, request: RawRequest, status: number, what: string): Promise<RawAnswer> {
  const answer = await target.raw(request);
  expectThat(answer.status === status, `${what} answered ${describe(answer)}, expected ${status}`);
  return answer;
}

function expectHeader(answer: RawAnswer, name: string, value: string, what: string): void {
  expectThat(answer.headers[name] === value, `${what} answered ${name}: ${answer.headers[name] ?? '(none)'}, expected ${value}`);
}

function expectBody(answer: RawAnswer, body: Buffer, what: string): void {
  expectThat(answer.body.equals(body), `${what} returned ${answer.body.length} bytes that differ from the ${body.length} stored`);
}

/** The KMS key named for the run (the sse-kms capability is present only with one). */
function kmsKey(target: Target): string {
  const keyId = target.options.kmsKeyId;
  if (!keyId) throw new Skip('no KMS key named (--kms-key-id)');
  return keyId;
}

function expectKmsKey(answer: RawAnswer, keyId: string, what: string): void {
  expectHeader(answer, sseHeader, 'aws:kms', what);
  const named = answer.headers[kmsKeyIdHeader];
  expectThat(named !== undefined && bareKeyId(named) === bareKeyId(keyId), `${what} answered ${kmsKeyIdHeader}: ${named ?? '(none)'}, expected the key ${keyId}`);
}

/** Ranges of an encrypted object read with `headers`: each answers 206 with its Content-Range and exactly its bytes. */
async function expectRanges(target: Target, bucket: string, key: string, body: Buffer, headers: Record<string, string>, ranges: [string, number, number][]): Promise<void> {
  for (const [range, first, last] of ranges) {
    const answer = await send(target, { method: 'GET', path: path(bucket, key), headers: { ...headers, range } }, 206, `GET with Range: ${range}`);
    expectHeader(answer, 'content-range', `bytes ${first}-${last}/${body.length}`, `GET with Range: ${range}`);
    expectBody(answer, body.subarray(first, last + 1), `GET with Range: ${range}`);
  }
}

/** A configuration of the bucket's default encryption. */
const defaultEncryption = (algorithm: string, keyId?: string) =>
  `<ServerSideEncryptionConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>${algorithm}</SSEAlgorithm>${keyId ? `<KMSMasterKeyID>${keyId}</KMSMasterKeyID>` : ''}</ApplyServerSideEncryptionByDefault></Rule></ServerSideEncryptionConfiguration>`;

const configRequest = (bucket: string, method: string, body?: string): RawRequest => ({
  method,
  path: `/${bucket}`,
  query: { encryption: '' },
  ...(body !== undefined ? { body, headers: { 'content-type': 'application/xml', 'content-md5': Buffer.from(md5Hex(body), 'hex').toString('base64') } } : {}),
});

/** The default rule GetBucketEncryption answers, or undefined for 404 ServerSideEncryptionConfigurationNotFoundError. */
async function defaultRule(target: Target, bucket: string): Promise<Record<string, any> | undefined> {
  const answer = await target.raw(configRequest(bucket, 'GET'));
  if (answer.status === 404) {
    expectRawError(answer, 404, 'ServerSideEncryptionConfigurationNotFoundError', 'GetBucketEncryption of a bucket without a configuration');
    return undefined;
  }
  expectThat(answer.status === 200, `GetBucketEncryption answered ${describe(answer)}`);
  const rule = answer.xml.ServerSideEncryptionConfiguration?.Rule;
  return (Array.isArray(rule) ? rule[0] : rule)?.ApplyServerSideEncryptionByDefault ?? {};
}

/** No configuration, or AWS's own default since 2023 (SSE-S3): what a bucket answers before one is put and after it is deleted. */
function expectNoOrSseS3Default(rule: Record<string, any> | undefined, when: string): void {
  expectThat(rule === undefined || (rule.SSEAlgorithm === 'AES256' && rule.KMSMasterKeyID === undefined), `${when} GetBucketEncryption answered ${JSON.stringify(rule)}, expected 404 ServerSideEncryptionConfigurationNotFoundError or SSE-S3`);
}

interface Upload {
  uploadId: string;
  etags: string[];
}

async function createUpload(target: Target, bucket: string, key: string, headers: Record<string, string>, check: (answer: RawAnswer) => void): Promise<string> {
  const created = await send(target, { method: 'POST', path: path(bucket, key), query: { uploads: '' }, headers }, 200, 'CreateMultipartUpload');
  check(created);
  const uploadId = created.xml.InitiateMultipartUploadResult?.UploadId;
  expectThat(typeof uploadId === 'string', 'CreateMultipartUpload answered no UploadId');
  return uploadId;
}

async function uploadPart(target: Target, bucket: string, key: string, uploadId: string, number: number, body: Buffer, headers: Record<string, string>): Promise<RawAnswer> {
  return target.raw({ method: 'PUT', path: path(bucket, key), query: { partNumber: String(number), uploadId }, body, headers });
}

async function complete(target: Target, bucket: string, key: string, upload: Upload): Promise<RawAnswer> {
  const body = `<CompleteMultipartUpload>${upload.etags.map((etag, index) => `<Part><PartNumber>${index + 1}</PartNumber><ETag>${etag}</ETag></Part>`).join('')}</CompleteMultipartUpload>`;
  return send(target, { method: 'POST', path: path(bucket, key), query: { uploadId: upload.uploadId }, body }, 200, 'CompleteMultipartUpload');
}

/** A completed two-part object reads whole, across its part boundary and by part number, with `headers`. */
async function expectMultipartReads(target: Target, bucket: string, key: string, parts: Buffer[], headers: Record<string, string>): Promise<void> {
  const whole = Buffer.concat(parts);
  expectBody(await send(target, { method: 'GET', path: path(bucket, key), headers }, 200, 'GET of the completed object'), whole, 'GET of the completed object');
  const boundary = parts[0]!.length;
  await expectRanges(target, bucket, key, whole, headers, [[`bytes=${boundary - 10}-${boundary + 9}`, boundary - 10, boundary + 9]]);
  const second = await send(target, { method: 'GET', path: path(bucket, key), query: { partNumber: '2' }, headers }, 206, 'GET with partNumber=2');
  expectThat(second.headers['x-amz-mp-parts-count'] === '2', `GET with partNumber=2 answered x-amz-mp-parts-count: ${second.headers['x-amz-mp-parts-count'] ?? '(none)'}, expected 2`);
  expectBody(second, parts[1]!, 'GET with partNumber=2');
}

export const encryptionChecks: Check[] = [
  {
    id: 's3.sse.s3-headers',
    spec: 'S3 PutObject (SSE-S3)',
    title: 'a PUT with x-amz-server-side-encryption: AES256 is answered with that header and the MD5 of the body as ETag; HEAD and GET answer the header, the plaintext length and the body',
    source: `${awsApi('PutObject')}; ${sseS3Guide}; ${etagRules}`,
    needs: ['sse-s3'],
    async run(target) {
      const bucket = await target.makeBucket('sse-s3');
      const body = patterned(150_001, 3);
      const put = await send(target, { method: 'PUT', path: path(bucket, 'doc'), body, headers: sseS3 }, 200, 'a PUT with SSE-S3');
      expectHeader(put, sseHeader, 'AES256', 'a PUT with SSE-S3');
      expectThat(put.headers.etag === quotedMd5(body), `the ETag of an SSE-S3 object is ${put.headers.etag}, expected the MD5 of its body ${quotedMd5(body)}`);
      const head = await send(target, { method: 'HEAD', path: path(bucket, 'doc') }, 200, 'HEAD of an SSE-S3 object');
      expectHeader(head, sseHeader, 'AES256', 'HEAD of an SSE-S3 object');
      expectHeader(head, 'content-length', String(body.length), 'HEAD of an SSE-S3 object');
      expectHeader(head, 'etag', put.headers.etag!, 'HEAD of an SSE-S3 object');
      const get = await send(target, { method: 'GET', path: path(bucket, 'doc') }, 200, 'GET of an SSE-S3 object');
      expectHeader(get, sseHeader, 'AES256', 'GET of an SSE-S3 object');
      expectBody(get, body, 'GET of an SSE-S3 object');
    },
  },
  {
    id: 's3.sse.s3-ranges',
    spec: 'S3 GetObject (encrypted ranges)',
    title: 'ranges of an SSE-S3 object (the first byte, across 64 KiB boundaries, open-ended, a suffix) answer 206 with their Content-Range and exactly their bytes',
    source: `${awsApi('GetObject')}; ${sseS3Guide}`,
    needs: ['sse-s3'],
    async run(target) {
      const bucket = await target.makeBucket('sse-ranges');
      const body = patterned(200_003, 5);
      await send(target, { method: 'PUT', path: path(bucket, 'ranged'), body, headers: sseS3 }, 200, 'a PUT with SSE-S3');
      await expectRanges(target, bucket, 'ranged', body, {}, [
        ['bytes=0-0', 0, 0],
        ['bytes=65535-65536', 65535, 65536],
        ['bytes=131000-140000', 131000, 140000],
        ['bytes=199990-', 199990, 200002],
        ['bytes=-7', 199996, 200002],
      ]);
    },
  },
  {
    id: 's3.sse.bucket-default',
    spec: 'S3 PutBucketEncryption',
    title: 'PutBucketEncryption with SSE-S3 reads back through GetBucketEncryption and encrypts a PUT that asks for nothing; malformed XML is 400 MalformedXML and changes nothing; DeleteBucketEncryption answers 204 and objects stored under the default stay readable',
    source: `${awsApi('PutBucketEncryption')}; ${awsApi('GetBucketEncryption')}; ${awsApi('DeleteBucketEncryption')}`,
    needs: ['sse-s3'],
    async run(target) {
      const bucket = await target.makeBucket('sse-default');
      expectNoOrSseS3Default(await defaultRule(target, bucket), 'before any PutBucketEncryption');
      await send(target, configRequest(bucket, 'PUT', defaultEncryption('AES256')), 200, 'PutBucketEncryption with AES256');
      expectThat((await defaultRule(target, bucket))?.SSEAlgorithm === 'AES256', 'GetBucketEncryption does not answer the AES256 rule just put');
      const malformed = await target.raw(configRequest(bucket, 'PUT', '<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault>'));
      expectRawError(malformed, 400, 'MalformedXML', 'PutBucketEncryption with truncated XML');
      expectThat((await defaultRule(target, bucket))?.SSEAlgorithm === 'AES256', 'a refused PutBucketEncryption changed the configuration');
      const body = patterned(3000, 7);
      const put = await send(target, { method: 'PUT', path: path(bucket, 'by-default'), body }, 200, 'a PUT without SSE headers into a bucket with default encryption');
      expectHeader(put, sseHeader, 'AES256', 'a PUT into a bucket whose default is SSE-S3');
      expectHeader(await send(target, { method: 'HEAD', path: path(bucket, 'by-default') }, 200, 'HEAD'), sseHeader, 'AES256', 'HEAD of an object encrypted by the bucket default');
      await send(target, configRequest(bucket, 'DELETE'), 204, 'DeleteBucketEncryption');
      expectNoOrSseS3Default(await defaultRule(target, bucket), 'after DeleteBucketEncryption');
      const get = await send(target, { method: 'GET', path: path(bucket, 'by-default') }, 200, 'GET after DeleteBucketEncryption');
      expectHeader(get, sseHeader, 'AES256', 'GET after DeleteBucketEncryption of an object encrypted by the default');
      expectBody(get, body, 'GET after DeleteBucketEncryption');
    },
  },
  {
    id: 's3.sse.bucket-default-kms',
    spec: 'S3 PutBucketEncryption',
    title: 'a default of aws:kms with a KMSMasterKeyID reads back, and a PUT that asks for nothing is encrypted under that key (its ETag not the MD5 of the body)',
    source: `${awsApi('PutBucketEncryption')}; ${sseKmsGuide}; ${etagRules}`,
    needs: ['sse-kms'],
    async run(target) {
      const keyId = kmsKey(target);
      const bucket = await target.makeBucket('sse-default-kms');
      await send(target, configRequest(bucket, 'PUT', defaultEncryption('aws:kms', keyId)), 200, `PutBucketEncryption with aws:kms and ${keyId}`);
      const rule = await defaultRule(target, bucket);
      expectThat(rule?.SSEAlgorithm === 'aws:kms' && typeof rule.KMSMasterKeyID === 'string' && bareKeyId(rule.KMSMasterKeyID) === bareKeyId(keyId), `GetBucketEncryption answered ${JSON.stringify(rule)}, expected aws:kms with ${keyId}`);
      const body = patterned(4000, 11);
      const put = await send(target, { method: 'PUT', path: path(bucket, 'by-default'), body }, 200, 'a PUT without SSE headers into a bucket whose default is SSE-KMS');
      expectKmsKey(put, keyId, 'a PUT into a bucket whose default is SSE-KMS');
      expectThat(put.headers.etag !== quotedMd5(body), 'the ETag of an SSE-KMS object is the MD5 of its body');
      const get = await send(target, { method: 'GET', path: path(bucket, 'by-default') }, 200, 'GET of an object encrypted by the bucket default');
      expectKmsKey(get, keyId, 'GET of an object encrypted by the bucket default');
      expectBody(get, body, 'GET of an object encrypted by the bucket default');
    },
  },
  {
    id: 's3.sse.kms-key',
    spec: 'S3 PutObject (SSE-KMS)',
    title: 'a PUT with aws:kms and a key id is answered with both headers and an ETag that is not the MD5 of the body; HEAD, GET and ranges read it; a copy of an SSE-S3 object may be sealed under the key; an unknown key id is 400 KMS.NotFoundException and stores nothing',
    source: `${awsApi('PutObject')}; ${sseKmsGuide}; ${etagRules}`,
    needs: ['sse-kms'],
    async run(target) {
      const keyId = kmsKey(target);
      const bucket = await target.makeBucket('sse-kms');
      const body = patterned(100_001, 13);
      const asked = { [sseHeader]: 'aws:kms', [kmsKeyIdHeader]: keyId };
      const put = await send(target, { method: 'PUT', path: path(bucket, 'doc'), body, headers: asked }, 200, `a PUT under ${keyId}`);
      expectKmsKey(put, keyId, `a PUT under ${keyId}`);
      expectThat(put.headers.etag !== quotedMd5(body), 'the ETag of an SSE-KMS object is the MD5 of its body');
      expectKmsKey(await send(target, { method: 'HEAD', path: path(bucket, 'doc') }, 200, 'HEAD of an SSE-KMS object'), keyId, 'HEAD of an SSE-KMS object');
      const get = await send(target, { method: 'GET', path: path(bucket, 'doc') }, 200, 'GET of an SSE-KMS object');
      expectKmsKey(get, keyId, 'GET of an SSE-KMS object');
      expectBody(get, body, 'GET of an SSE-KMS object');
      await expectRanges(target, bucket, 'doc', body, {}, [['bytes=65530-65545', 65530, 65545]]);
      await send(target, { method: 'PUT', path: path(bucket, 'source'), body, headers: sseS3 }, 200, 'a PUT with SSE-S3');
      const copy = await send(target, { method: 'PUT', path: path(bucket, 'copied'), headers: { ...asked, 'x-amz-copy-source': `/${bucket}/source` } }, 200, `CopyObject of an SSE-S3 object under ${keyId}`);
      expectKmsKey(copy, keyId, `CopyObject of an SSE-S3 object under ${keyId}`);
      expectBody(await send(target, { method: 'GET', path: path(bucket, 'copied') }, 200, 'GET of the copy'), body, 'GET of the copy');
      const unknown = `${bareKeyId(keyId)}-unknown-${target.runPrefix.slice(5, -1)}`;
      const refused = await target.raw({ method: 'PUT', path: path(bucket, 'unknown-key'), body: 'x', headers: { [sseHeader]: 'aws:kms', [kmsKeyIdHeader]: unknown } });
      expectRawError(refused, 400, 'KMS.NotFoundException', `a PUT under a key that does not exist (${unknown})`);
      const head = await target.raw({ method: 'HEAD', path: path(bucket, 'unknown-key') });
      expectThat(head.status === 404, `a PUT refused for its unknown key stored an object (HEAD answered ${head.status})`);
    },
  },
  {
    id: 's3.sse.c-round-trip',
    spec: 'S3 PutObject (SSE-C)',
    title: 'a PUT with a customer key is answered with its algorithm and key MD5 and an ETag that is not the MD5 of the body; HEAD, GET and ranges with the key answer them and the bytes',
    source: `${awsApi('PutObject')}; ${sseCGuide}; ${etagRules}`,
    needs: ['sse-c'],
    async run(target) {
      const bucket = await target.makeBucket('sse-c');
      const key = customerKey(target);
      const withKey = customerKeyHeaders(key);
      const body = patterned(100_003, 17);
      const put = await send(target, { method: 'PUT', path: path(bucket, 'doc'), body, headers: withKey }, 200, 'a PUT with a customer key');
      expectHeader(put, customerAlgorithmHeader, 'AES256', 'a PUT with a customer key');
      expectHeader(put, customerKeyMd5Header, keyMd5(key), 'a PUT with a customer key');
      expectThat(put.headers.etag !== quotedMd5(body), 'the ETag of an SSE-C object is the MD5 of its body');
      const head = await send(target, { method: 'HEAD', path: path(bucket, 'doc'), headers: withKey }, 200, 'HEAD with the customer key');
      expectHeader(head, customerAlgorithmHeader, 'AES256', 'HEAD with the customer key');
      expectHeader(head, customerKeyMd5Header, keyMd5(key), 'HEAD with the customer key');
      expectHeader(head, 'content-length', String(body.length), 'HEAD with the customer key');
      const get = await send(target, { method: 'GET', path: path(bucket, 'doc'), headers: withKey }, 200, 'GET with the customer key');
      expectHeader(get, customerAlgorithmHeader, 'AES256', 'GET with the customer key');
      expectBody(get, body, 'GET with the customer key');
      await expectRanges(target, bucket, 'doc', body, withKey, [
        ['bytes=70000-70099', 70000, 70099],
        ['bytes=-3', 100000, 100002],
      ]);
    },
  },
  {
    id: 's3.sse.c-key-errors',
    spec: 'S3 GetObject (SSE-C)',
    title: 'an SSE-C object without its key is 400 InvalidRequest and with another key 403 AccessDenied, on GET and HEAD, returning none of its bytes; a key whose MD5 does not match, a key without its algorithm and a short key are 400 InvalidArgument and store nothing',
    source: `${sseCGuide}; ${awsApi('HeadObject')}; ${s3Tests('test_encryption_sse_c_present')}; ${s3Tests('test_encryption_sse_c_other_key')}; ${s3Tests('test_encryption_sse_c_invalid_md5')}; ${s3Tests('test_encryption_key_no_sse_c')}`,
    needs: ['sse-c'],
    async run(target) {
      const bucket = await target.makeBucket('sse-c-errors');
      const key = customerKey(target);
      const other = customerKey(target);
      const body = Buffer.from(`only-with-the-key-${target.runPrefix}`.repeat(100));
      await send(target, { method: 'PUT', path: path(bucket, 'doc'), body, headers: customerKeyHeaders(key) }, 200, 'a PUT with a customer key');
      for (const method of ['GET', 'HEAD']) {
        const missing = await target.raw({ method, path: path(bucket, 'doc') });
        expectThat(missing.status === 400 && (method === 'HEAD' || missing.code === 'InvalidRequest'), `${method} of an SSE-C object without its key answered ${describe(missing)}, expected 400 InvalidRequest`);
        const wrong = await target.raw({ method, path: path(bucket, 'doc'), headers: customerKeyHeaders(other) });
        expectThat(wrong.status === 403 && (method === 'HEAD' || wrong.code === 'AccessDenied'), `${method} of an SSE-C object with another key answered ${describe(wrong)}, expected 403 AccessDenied`);
        for (const answer of [missing, wrong]) expectThat(!answer.body.includes(body.subarray(0, 30)), `a refused ${method} returned bytes of the object`);
      }
      const badMd5 = { ...customerKeyHeaders(key), [customerKeyMd5Header]: keyMd5(other) };
      const noAlgorithm = Object.fromEntries(Object.entries(customerKeyHeaders(key)).filter(([name]) => name !== customerAlgorithmHeader));
      const short = customerKeyHeaders(key.subarray(0, 16));
      for (const [name, headers] of [['a key MD5 that does not match the key', badMd5], ['a key and its MD5 without the algorithm', noAlgorithm], ['a 16-byte key', short]] as const) {
        const refused = await target.raw({ method: 'PUT', path: path(bucket, 'refused'), body: 'x', headers });
        expectRawError(refused, 400, 'InvalidArgument', `a PUT with ${name}`);
      }
      const head = await target.raw({ method: 'HEAD', path: path(bucket, 'refused') });
      expectThat(head.status === 404, `a PUT refused for its customer key stored an object (HEAD answered ${head.status})`);
    },
  },
  {
    id: 's3.sse.c-plain-http',
    spec: 'S3 PutObject (SSE-C over HTTP)',
    title: 'over plain HTTP a request with a customer key is refused (400 InvalidRequest): a PUT stores nothing and a GET returns nothing',
    source: `${sseCGuide}; ${awsGuide('specifying-s3-c-encryption')}`,
    async run(target) {
      if (new URL(target.options.endpoint).protocol !== 'http:') throw new Skip('the endpoint is not plain HTTP');
      if (target.options.ssecOverHttp) throw new Skip('the target was declared to take customer keys over plain HTTP (--ssec-over-http, a test deployment)');
      const bucket = await target.makeBucket('sse-c-http');
      const key = customerKey(target);
      const put = await target.raw({ method: 'PUT', path: path(bucket, 'doc'), body: 'sent in the clear', headers: customerKeyHeaders(key) });
      if (put.status === 501) throw new NotApplicable(`a PUT with a customer key answered ${describe(put)} (SSE-C not offered)`);
      expectRawError(put, 400, 'InvalidRequest', 'a PUT with a customer key over plain HTTP');
      const head = await target.raw({ method: 'HEAD', path: path(bucket, 'doc') });
      expectThat(head.status === 404, `a PUT with a customer key over plain HTTP stored an object (HEAD answered ${head.status})`);
      await send(target, { method: 'PUT', path: path(bucket, 'plain'), body: 'plain body' }, 200, 'a PUT without SSE headers');
      const get = await target.raw({ method: 'GET', path: path(bucket, 'plain'), headers: customerKeyHeaders(key) });
      expectRawError(get, 400, 'InvalidRequest', 'a GET with a customer key over plain HTTP');
    },
  },
  {
    id: 's3.sse.copy-between-modes',
    spec: 'S3 CopyObject (encryption)',
    title: 'CopyObject opens an SSE-C source with the x-amz-copy-source-...-customer-* key (without it 400 InvalidRequest, nothing stored) and seals the target as asked: SSE-C to SSE-S3 (ETag the MD5), SSE-S3 to SSE-C under a new key (readable only with it), SSE-C to no SSE headers (readable without a key)',
    source: `${awsApi('CopyObject')}; ${sseCGuide}; ${etagRules}`,
    needs: ['sse-s3', 'sse-c'],
    async run(target) {
      const bucket = await target.makeBucket('sse-copy');
      const first = customerKey(target);
      const second = customerKey(target);
      const body = patterned(70_001, 19);
      const copy = (to: string, from: string, headers: Record<string, string>) => target.raw({ method: 'PUT', path: path(bucket, to), headers: { 'x-amz-copy-source': `/${bucket}/${encodeKey(from)}`, ...headers } });
      await send(target, { method: 'PUT', path: path(bucket, 'source-c'), body, headers: customerKeyHeaders(first) }, 200, 'a PUT with a customer key');
      const keyless = await copy('no-source-key', 'source-c', sseS3);
      expectRawError(keyless, 400, 'InvalidRequest', 'CopyObject of an SSE-C source without x-amz-copy-source-server-side-encryption-customer-*');
      expectThat((await target.raw({ method: 'HEAD', path: path(bucket, 'no-source-key') })).status === 404, 'a refused CopyObject stored its target');
      const toS3 = await copy('to-s3', 'source-c', { ...sseS3, ...customerKeyHeaders(first, 'x-amz-copy-source-') });
      expectThat(toS3.status === 200, `CopyObject from SSE-C to SSE-S3 answered ${describe(toS3)}`);
      expectHeader(toS3, sseHeader, 'AES256', 'CopyObject from SSE-C to SSE-S3');
      const readS3 = await send(target, { method: 'GET', path: path(bucket, 'to-s3') }, 200, 'GET of the SSE-S3 copy without a key');
      expectBody(readS3, body, 'GET of the SSE-S3 copy');
      expectHeader(readS3, 'etag', quotedMd5(body), 'GET of the SSE-S3 copy');
      const toC = await copy('to-c', 'to-s3', customerKeyHeaders(second));
      expectThat(toC.status === 200, `CopyObject from SSE-S3 to SSE-C answered ${describe(toC)}`);
      expectHeader(toC, customerKeyMd5Header, keyMd5(second), 'CopyObject from SSE-S3 to SSE-C');
      expectRawError(await target.raw({ method: 'GET', path: path(bucket, 'to-c') }), 400, 'InvalidRequest', 'GET of the SSE-C copy without its key');
      expectBody(await send(target, { method: 'GET', path: path(bucket, 'to-c'), headers: customerKeyHeaders(second) }, 200, 'GET of the SSE-C copy with its key'), body, 'GET of the SSE-C copy');
      const opened = await copy('opened', 'to-c', customerKeyHeaders(second, 'x-amz-copy-source-'));
      expectThat(opened.status === 200, `CopyObject from SSE-C asking for no encryption answered ${describe(opened)}`);
      expectBody(await send(target, { method: 'GET', path: path(bucket, 'opened') }, 200, 'GET without a key of a copy that asked for no customer key'), body, 'GET of the copy');
    },
  },
  {
    id: 's3.sse.multipart-s3',
    spec: 'S3 CreateMultipartUpload (SSE-S3)',
    title: 'a multipart upload created with SSE-S3 answers AES256 on CreateMultipartUpload, every UploadPart and CompleteMultipartUpload; the object (ETag with -2) reads whole, across the part boundary and by part number',
    source: `${awsApi('CreateMultipartUpload')}; ${awsApi('UploadPart')}; ${awsApi('CompleteMultipartUpload')}; ${sseS3Guide}`,
    needs: ['sse-s3', 'multipart'],
    async run(target) {
      const bucket = await target.makeBucket('sse-mp-s3');
      const parts = [patterned(5 * MiB, 23), patterned(100_001, 29)];
      const uploadId = await createUpload(target, bucket, 'mp', sseS3, (answer) => expectHeader(answer, sseHeader, 'AES256', 'CreateMultipartUpload with SSE-S3'));
      const etags: string[] = [];
      for (const [index, part] of parts.entries()) {
        const answer = await uploadPart(target, bucket, 'mp', uploadId, index + 1, part, {});
        expectThat(answer.status === 200 && answer.headers.etag, `UploadPart ${index + 1} answered ${describe(answer)}`);
        expectHeader(answer, sseHeader, 'AES256', `UploadPart ${index + 1} of an SSE-S3 upload`);
        etags.push(answer.headers.etag!);
      }
      const done = await complete(target, bucket, 'mp', { uploadId, etags });
      expectHeader(done, sseHeader, 'AES256', 'CompleteMultipartUpload of an SSE-S3 upload');
      const head = await send(target, { method: 'HEAD', path: path(bucket, 'mp') }, 200, 'HEAD of the completed object');
      expectHeader(head, sseHeader, 'AES256', 'HEAD of the completed object');
      expectThat(/-2"$/.test(head.headers.etag ?? ''), `the ETag of a two-part object is ${head.headers.etag}, expected one ending in -2`);
      await expectMultipartReads(target, bucket, 'mp', parts, {});
    },
  },
  {
    id: 's3.sse.multipart-c',
    spec: 'S3 UploadPart (SSE-C)',
    title: 'a multipart upload created with a customer key takes that key on every UploadPart (another key is 400 and stores nothing) and echoes it; the object reads whole, across the part boundary and by part number with the key, and not without it',
    source: `${awsApi('UploadPart')}; ${sseCGuide}; ${s3Tests('test_encryption_sse_c_multipart_invalid_chunks_1')}; ${s3Tests('test_encryption_sse_c_multipart_upload')}`,
    needs: ['sse-c', 'multipart'],
    async run(target) {
      const bucket = await target.makeBucket('sse-mp-c');
      const key = customerKey(target);
      const withKey = customerKeyHeaders(key);
      const parts = [patterned(5 * MiB, 31), patterned(90_001, 37)];
      const uploadId = await createUpload(target, bucket, 'mp', withKey, (answer) => expectHeader(answer, customerKeyMd5Header, keyMd5(key), 'CreateMultipartUpload with a customer key'));
      const wrong = await uploadPart(target, bucket, 'mp', uploadId, 2, parts[1]!, customerKeyHeaders(customerKey(target)));
      expectThat(wrong.status === 400, `UploadPart with another customer key than the upload's answered ${describe(wrong)}, expected 400`);
      const etags: string[] = [];
      for (const [index, part] of parts.entries()) {
        const answer = await uploadPart(target, bucket, 'mp', uploadId, index + 1, part, withKey);
        expectThat(answer.status === 200 && answer.headers.etag, `UploadPart ${index + 1} with the upload's key answered ${describe(answer)}`);
        expectHeader(answer, customerAlgorithmHeader, 'AES256', `UploadPart ${index + 1} with a customer key`);
        expectHeader(answer, customerKeyMd5Header, keyMd5(key), `UploadPart ${index + 1} with a customer key`);
        etags.push(answer.headers.etag!);
      }
      await complete(target, bucket, 'mp', { uploadId, etags });
      expectRawError(await target.raw({ method: 'GET', path: path(bucket, 'mp') }), 400, 'InvalidRequest', 'GET of an SSE-C multipart object without its key');
      await expectMultipartReads(target, bucket, 'mp', parts, withKey);
    },
  },
];
