/**
 * The S3 APIs of 2024–26: conditional writes and deletes, full-object checksums and CRC64NVME,
 * GetObjectAttributes, ListBuckets pagination, x-amz-expected-bucket-owner, the ETag of a 304, and
 * the copy-source preconditions in combination. A target that has not implemented one of them
 * shows it by ignoring the header or parameter; each check first sends such a probe and is n/a,
 * naming the probe and its answer, when the feature is plainly absent; otherwise it fails on any
 * departure from AWS's documented answer.
 */
import { crc32 } from '@aws-crypto/crc32';
import { expectThat, NotApplicable, type Check, type Target } from '../../runner/check.js';
import type { RawAnswer } from '../../runner/http.js';
import { expectRawError, patterned, textOf } from './support.js';
import { awsApi, awsGuide } from './sources.js';

const conditionalWrites = awsGuide('conditional-writes');
const checksums = awsGuide('checking-object-integrity');

/** CRC-64/NVME (reflected polynomial 0x9a6c9329ac4bc9b5, initial and final XOR all ones). */
const crc64Table = (() => {
  const table: bigint[] = [];
  for (let index = 0n; index < 256n; index += 1n) {
    let value = index;
    for (let bit = 0; bit < 8; bit += 1) value = value & 1n ? (value >> 1n) ^ 0x9a6c9329ac4bc9b5n : value >> 1n;
    table.push(value);
  }
  return table;
})();

export function crc64nvme(data: Uint8Array): bigint {
  let crc = 0xffffffffffffffffn;
  for (const byte of data) crc = crc64Table[Number((crc ^ BigInt(byte)) & 0xffn)]! ^ (crc >> 8n);
  return crc ^ 0xffffffffffffffffn;
}

const base64Of64 = (value: bigint) => {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(value);
  return bytes.toString('base64');
};
const base64Of32 = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value >>> 0);
  return bytes.toString('base64');
};

const path = (bucket: string, key: string) => `/${bucket}/${encodeURIComponent(key)}`;
const describe = (answer: RawAnswer) => `${answer.status}${answer.code ? ` ${answer.code}` : ''}`;

async function putRaw(target: Target, bucket: string, key: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return target.raw({ method: 'PUT', path: path(bucket, key), body, headers });
}

async function currentText(target: Target, bucket: string, key: string): Promise<string | undefined> {
  const answer = await target.raw({ method: 'GET', path: path(bucket, key) });
  return answer.status === 200 ? answer.text : undefined;
}

/** The ETag of a key's current version, quoted. */
async function etagOf(target: Target, bucket: string, key: string): Promise<string> {
  const head = await target.raw({ method: 'HEAD', path: path(bucket, key) });
  expectThat(head.status === 200 && head.headers.etag, `HEAD of ${key} answered ${head.status} without an ETag`);
  return head.headers.etag!;
}

async function multipartOf(target: Target, bucket: string, key: string, parts: Buffer[], createHeaders: Record<string, string> = {}, partHeaders: (part: Buffer) => Record<string, string> = () => ({})) {
  const created = await target.raw({ method: 'POST', path: path(bucket, key), query: { uploads: '' }, headers: createHeaders });
  expectThat(created.status === 200 && created.xml.InitiateMultipartUploadResult?.UploadId, `CreateMultipartUpload answered ${describe(created)}`);
  const uploadId = String(created.xml.InitiateMultipartUploadResult.UploadId);
  const etags: string[] = [];
  for (const [index, part] of parts.entries()) {
    const answer = await target.raw({ method: 'PUT', path: path(bucket, key), query: { partNumber: String(index + 1), uploadId }, body: part, headers: partHeaders(part) });
    expectThat(answer.status === 200 && answer.headers.etag, `UploadPart ${index + 1} answered ${describe(answer)}`);
    etags.push(answer.headers.etag!);
  }
  return { created, uploadId, etags };
}

const completeBody = (etags: string[], extra: (index: number) => string = () => '') => `<CompleteMultipartUpload>${etags.map((etag, index) => `<Part><PartNumber>${index + 1}</PartNumber><ETag>${etag}</ETag>${extra(index)}</Part>`).join('')}</CompleteMultipartUpload>`;

export const recentChecks: Check[] = [
  {
    id: 's3.conditional-write.put-if-none-match',
    spec: 'S3 PutObject (conditional writes)',
    title: 'a PUT with If-None-Match: * stores a new key, and over an existing key answers 412 PreconditionFailed and keeps it',
    source: `${awsApi('PutObject')}; ${conditionalWrites}`,
    async run(target) {
      const bucket = await target.makeBucket('if-none-match');
      const first = await putRaw(target, bucket, 'doc', 'first', { 'if-none-match': '*' });
      expectThat(first.status === 200, `a PUT with If-None-Match: * of a new key answered ${describe(first)}`);
      const second = await putRaw(target, bucket, 'doc', 'second', { 'if-none-match': '*' });
      if (second.status === 200) throw new NotApplicable(`PUT with If-None-Match: * over an existing key answered 200 and replaced it (the header is ignored)`);
      expectRawError(second, 412, 'PreconditionFailed', 'a PUT with If-None-Match: * over an existing key');
      expectThat((await currentText(target, bucket, 'doc')) === 'first', 'a refused conditional PUT changed the object');
    },
  },
  {
    id: 's3.conditional-write.put-if-match',
    spec: 'S3 PutObject (conditional writes)',
    title: 'a PUT with If-Match replaces the object only while its ETag matches (else 412 PreconditionFailed), and on a missing key answers 404 NoSuchKey',
    source: `${awsApi('PutObject')}; ${conditionalWrites}`,
    async run(target) {
      const bucket = await target.makeBucket('if-match');
      const first = await putRaw(target, bucket, 'doc', 'first');
      const stale = first.headers.etag!;
      const replaced = await putRaw(target, bucket, 'doc', 'second', { 'if-match': stale });
      expectThat(replaced.status === 200, `a PUT with If-Match the current ETag answered ${describe(replaced)}`);
      const late = await putRaw(target, bucket, 'doc', 'third', { 'if-match': stale });
      if (late.status === 200) throw new NotApplicable(`PUT with If-Match a replaced ETag answered 200 (the header is ignored)`);
      expectRawError(late, 412, 'PreconditionFailed', 'a PUT with If-Match a replaced ETag');
      expectThat((await currentText(target, bucket, 'doc')) === 'second', 'a refused conditional PUT changed the object');
      const missing = await putRaw(target, bucket, 'never-written', 'x', { 'if-match': stale });
      expectRawError(missing, 404, 'NoSuchKey', 'a PUT with If-Match of a key that does not exist');
      expectThat((await currentText(target, bucket, 'never-written')) === undefined, 'a refused conditional PUT stored an object');
    },
  },
  {
    id: 's3.conditional-write.complete-multipart',
    spec: 'S3 CompleteMultipartUpload (conditional writes)',
    title: 'CompleteMultipartUpload with If-None-Match: * over an existing key answers 412 and keeps the object; with If-Match its ETag it completes',
    source: `${awsApi('CompleteMultipartUpload')}; ${conditionalWrites}`,
    needs: ['multipart'],
    async run(target) {
      const bucket = await target.makeBucket('complete-conditional');
      await putRaw(target, bucket, 'doc', 'existing');
      const { uploadId, etags } = await multipartOf(target, bucket, 'doc', [Buffer.from('uploaded')]);
      const refused = await target.raw({ method: 'POST', path: path(bucket, 'doc'), query: { uploadId }, body: completeBody(etags), headers: { 'if-none-match': '*' } });
      if (refused.status === 200 && !refused.code) throw new NotApplicable(`CompleteMultipartUpload with If-None-Match: * over an existing key answered 200 (the header is ignored)`);
      expectRawError(refused, 412, 'PreconditionFailed', 'CompleteMultipartUpload with If-None-Match: * over an existing key');
      expectThat((await currentText(target, bucket, 'doc')) === 'existing', 'a refused conditional completion changed the object');
      const done = await target.raw({ method: 'POST', path: path(bucket, 'doc'), query: { uploadId }, body: completeBody(etags), headers: { 'if-match': await etagOf(target, bucket, 'doc') } });
      expectThat(done.status === 200 && !done.code, `CompleteMultipartUpload with If-Match the current ETag answered ${describe(done)} (the upload must stay open after a 412)`);
      expectThat((await currentText(target, bucket, 'doc')) === 'uploaded', 'the completed upload is not the object');
    },
  },
  {
    id: 's3.conditional-delete.if-match',
    spec: 'S3 DeleteObject (conditional deletes)',
    title: 'a DELETE with If-Match another ETag answers 412 PreconditionFailed and keeps the object; with its ETag it deletes',
    source: awsApi('DeleteObject'),
    async run(target) {
      const bucket = await target.makeBucket('delete-if-match');
      await putRaw(target, bucket, 'doc', 'kept');
      const refused = await target.raw({ method: 'DELETE', path: path(bucket, 'doc'), headers: { 'if-match': '"0123456789abcdef0123456789abcdef"' } });
      if (refused.status === 204 && (await currentText(target, bucket, 'doc')) === undefined) throw new NotApplicable('DELETE with If-Match another ETag answered 204 and deleted the object (the header is ignored)');
      expectRawError(refused, 412, 'PreconditionFailed', 'a DELETE with If-Match another ETag');
      expectThat((await currentText(target, bucket, 'doc')) === 'kept', 'a refused conditional DELETE removed the object');
      const deleted = await target.raw({ method: 'DELETE', path: path(bucket, 'doc'), headers: { 'if-match': await etagOf(target, bucket, 'doc') } });
      expectThat(deleted.status === 204, `a DELETE with If-Match the current ETag answered ${describe(deleted)}`);
      expectThat((await currentText(target, bucket, 'doc')) === undefined, 'a DELETE with the matching ETag left the object');
    },
  },
  {
    id: 's3.checksum.crc64nvme',
    spec: 'S3 PutObject (checksums)',
    title: 'a PUT with a correct x-amz-checksum-crc64nvme is stored and HEAD with checksum mode returns it with x-amz-checksum-type FULL_OBJECT; a wrong one is refused with BadDigest',
    source: checksums,
    async run(target) {
      const bucket = await target.makeBucket('crc64nvme');
      const body = patterned(10_000, 7);
      const wrong = await putRaw(target, bucket, 'wrong', body, { 'x-amz-checksum-crc64nvme': base64Of64(crc64nvme(Buffer.from('other'))) });
      if (wrong.status === 200) throw new NotApplicable('a PUT with a wrong x-amz-checksum-crc64nvme was stored (CRC64NVME is not verified)');
      expectRawError(wrong, 400, 'BadDigest', 'a PUT with a wrong x-amz-checksum-crc64nvme');
      expectThat((await currentText(target, bucket, 'wrong')) === undefined, 'a PUT refused for its checksum stored an object');
      const value = base64Of64(crc64nvme(body));
      const stored = await putRaw(target, bucket, 'right', body, { 'x-amz-checksum-crc64nvme': value });
      expectThat(stored.status === 200, `a PUT with the right x-amz-checksum-crc64nvme answered ${describe(stored)}`);
      const head = await target.raw({ method: 'HEAD', path: path(bucket, 'right'), headers: { 'x-amz-checksum-mode': 'ENABLED' } });
      expectThat(head.headers['x-amz-checksum-crc64nvme'] === value, `HEAD with checksum mode gave x-amz-checksum-crc64nvme ${head.headers['x-amz-checksum-crc64nvme'] ?? '(none)'}, expected ${value}`);
      expectThat(head.headers['x-amz-checksum-type'] === 'FULL_OBJECT', `HEAD with checksum mode gave x-amz-checksum-type ${head.headers['x-amz-checksum-type'] ?? '(none)'}, expected FULL_OBJECT`);
    },
  },
  {
    id: 's3.checksum.full-object-multipart',
    spec: 'S3 CompleteMultipartUpload (checksums)',
    title: 'a multipart upload created with x-amz-checksum-type FULL_OBJECT and CRC32 completes with the CRC32 of the whole object, reported with type FULL_OBJECT',
    source: `${awsApi('CreateMultipartUpload')}; ${checksums}`,
    needs: ['multipart'],
    async run(target) {
      const bucket = await target.makeBucket('full-object');
      const parts = [patterned(5 * 1024 * 1024, 1), patterned(1000, 2)];
      const crcOf = (data: Buffer) => base64Of32(crc32(data));
      const whole = crcOf(Buffer.concat(parts));
      const { created, uploadId, etags } = await multipartOf(target, bucket, 'doc', parts, { 'x-amz-checksum-algorithm': 'CRC32', 'x-amz-checksum-type': 'FULL_OBJECT' }, (part) => ({ 'x-amz-checksum-crc32': crcOf(part) }));
      if (created.headers['x-amz-checksum-type'] === undefined) {
        await target.raw({ method: 'DELETE', path: path(bucket, 'doc'), query: { uploadId } });
        throw new NotApplicable(`CreateMultipartUpload with x-amz-checksum-type FULL_OBJECT answered ${describe(created)} without x-amz-checksum-type (checksum types are not offered)`);
      }
      expectThat(created.headers['x-amz-checksum-type'] === 'FULL_OBJECT' && created.headers['x-amz-checksum-algorithm'] === 'CRC32', `CreateMultipartUpload answered checksum type ${created.headers['x-amz-checksum-type']} and algorithm ${created.headers['x-amz-checksum-algorithm'] ?? '(none)'}`);
      const done = await target.raw({ method: 'POST', path: path(bucket, 'doc'), query: { uploadId }, body: completeBody(etags, (index) => `<ChecksumCRC32>${crcOf(parts[index]!)}</ChecksumCRC32>`), headers: { 'x-amz-checksum-crc32': whole, 'x-amz-checksum-type': 'FULL_OBJECT' } });
      expectThat(done.status === 200 && !done.code, `CompleteMultipartUpload answered ${describe(done)}`);
      const result = done.xml.CompleteMultipartUploadResult ?? {};
      expectThat(result.ChecksumCRC32 === whole && result.ChecksumType === 'FULL_OBJECT', `CompleteMultipartUpload gave ChecksumCRC32 ${result.ChecksumCRC32} and ChecksumType ${result.ChecksumType}, expected ${whole} and FULL_OBJECT`);
      const head = await target.raw({ method: 'HEAD', path: path(bucket, 'doc'), headers: { 'x-amz-checksum-mode': 'ENABLED' } });
      expectThat(head.headers['x-amz-checksum-crc32'] === whole && head.headers['x-amz-checksum-type'] === 'FULL_OBJECT', `HEAD with checksum mode gave ${head.headers['x-amz-checksum-crc32']} (${head.headers['x-amz-checksum-type']}), expected ${whole} (FULL_OBJECT)`);
    },
  },
  {
    id: 's3.attributes.etag-size-class',
    spec: 'S3 GetObjectAttributes',
    title: 'GetObjectAttributes answers the ETag, size and storage class it is asked for, without the body; an unknown attribute is refused with InvalidArgument',
    source: awsApi('GetObjectAttributes'),
    async run(target) {
      const bucket = await target.makeBucket('attributes');
      const body = 'attributes body';
      const etag = (await putRaw(target, bucket, 'doc', body)).headers.etag!;
      const answer = await target.raw({ method: 'GET', path: path(bucket, 'doc'), query: { attributes: '' }, headers: { 'x-amz-object-attributes': 'ETag,ObjectSize,StorageClass' } });
      const result = answer.xml.GetObjectAttributesResponse ?? answer.xml.GetObjectAttributesOutput;
      if (answer.status === 501 || (answer.status === 200 && answer.text === body)) throw new NotApplicable(`GET ?attributes answered ${describe(answer)}${answer.text === body ? ' with the object body' : ''} (GetObjectAttributes is not offered)`);
      expectThat(answer.status === 200 && result, `GetObjectAttributes answered ${describe(answer)}: ${answer.text.slice(0, 120)}`);
      expectThat(String(result.ETag).replace(/"/g, '') === etag.replace(/"/g, ''), `GetObjectAttributes gave ETag ${result.ETag}, expected ${etag}`);
      expectThat(String(result.ObjectSize) === String(body.length), `GetObjectAttributes gave ObjectSize ${result.ObjectSize}, expected ${body.length}`);
      expectThat(result.StorageClass === 'STANDARD', `GetObjectAttributes gave StorageClass ${result.StorageClass}, expected STANDARD`);
      expectThat(answer.headers['last-modified'], 'GetObjectAttributes answered without Last-Modified');
      const unknown = await target.raw({ method: 'GET', path: path(bucket, 'doc'), query: { attributes: '' }, headers: { 'x-amz-object-attributes': 'ETag,Colour' } });
      expectRawError(unknown, 400, 'InvalidArgument', 'GetObjectAttributes of an unknown attribute');
    },
  },
  {
    id: 's3.list-buckets.paging',
    spec: 'S3 ListBuckets',
    title: 'ListBuckets with max-buckets and a prefix pages with continuation tokens, each bucket once, in order, the prefix echoed',
    source: awsApi('ListBuckets'),
    async run(target) {
      const made: string[] = [];
      for (const suffix of ['lb-c', 'lb-a', 'lb-b']) made.push(await target.makeBucketNamed(suffix));
      const prefix = `${target.runPrefix}lb-`;
      const seen: string[] = [];
      let token: string | undefined;
      for (let page = 0; page < 10; page += 1) {
        const answer = await target.raw({ method: 'GET', path: '/', query: { 'max-buckets': '2', prefix, ...(token ? { 'continuation-token': token } : {}) } });
        expectThat(answer.status === 200, `ListBuckets with max-buckets answered ${describe(answer)}`);
        const result = answer.xml.ListAllMyBucketsResult ?? {};
        const listed = ([] as { Name: string }[]).concat(result.Buckets?.Bucket ?? []).map((bucket) => bucket.Name);
        if (page === 0 && (listed.length > 2 || listed.some((name) => !name.startsWith(prefix)))) throw new NotApplicable(`ListBuckets with max-buckets=2 and a prefix listed ${listed.length} bucket(s)${listed.some((name) => !name.startsWith(prefix)) ? ', some outside the prefix' : ''} (pagination is not offered)`);
        expectThat(listed.length <= 2, `a page of max-buckets=2 listed ${listed.length} buckets`);
        expectThat(result.Prefix === prefix, `ListBuckets echoed Prefix ${JSON.stringify(result.Prefix)}, expected ${JSON.stringify(prefix)}`);
        seen.push(...listed);
        token = result.ContinuationToken || undefined;
        if (!token) break;
      }
      const expected = [...made].sort();
      expectThat(JSON.stringify(seen) === JSON.stringify(expected), `paging ListBuckets gave ${JSON.stringify(seen)}, expected ${JSON.stringify(expected)}`);
    },
  },
  {
    id: 's3.expected-owner.refused',
    spec: 'S3 expected bucket owner',
    title: 'a request whose x-amz-expected-bucket-owner names another account is refused with 403 AccessDenied and changes nothing',
    source: awsGuide('bucket-owner-condition'),
    async run(target) {
      const bucket = await target.makeBucket('expected-owner');
      await putRaw(target, bucket, 'doc', 'kept');
      const other = { 'x-amz-expected-bucket-owner': '000000000000' };
      const put = await putRaw(target, bucket, 'doc', 'replaced', other);
      if (put.status === 200) throw new NotApplicable('a PUT with x-amz-expected-bucket-owner 000000000000 was stored (the header is ignored)');
      expectRawError(put, 403, 'AccessDenied', 'a PUT naming another expected bucket owner');
      const get = await target.raw({ method: 'GET', path: path(bucket, 'doc'), headers: other });
      expectRawError(get, 403, 'AccessDenied', 'a GET naming another expected bucket owner');
      const list = await target.raw({ method: 'GET', path: `/${bucket}`, query: { 'list-type': '2' }, headers: other });
      expectRawError(list, 403, 'AccessDenied', 'a ListObjectsV2 naming another expected bucket owner');
      expectThat((await textOf(target, bucket, 'doc')) === 'kept', 'a refused PUT changed the object');
    },
  },
  {
    id: 's3.conditional.not-modified-etag',
    spec: 'S3 GetObject (conditional)',
    title: 'a 304 Not Modified answer to GET and HEAD carries the ETag and Last-Modified of the object, and no body',
    source: `${awsApi('GetObject')}; https://www.rfc-editor.org/rfc/rfc9110#section-15.4.5`,
    async run(target) {
      const bucket = await target.makeBucket('not-modified');
      await putRaw(target, bucket, 'doc', 'body');
      const etag = await etagOf(target, bucket, 'doc');
      for (const method of ['GET', 'HEAD']) {
        const answer = await target.raw({ method, path: path(bucket, 'doc'), headers: { 'if-none-match': etag } });
        expectThat(answer.status === 304, `${method} with If-None-Match the current ETag answered ${describe(answer)}`);
        expectThat(answer.headers.etag === etag, `the 304 to ${method} carried ETag ${answer.headers.etag ?? '(none)'}, expected ${etag}`);
        expectThat(answer.headers['last-modified'], `the 304 to ${method} carried no Last-Modified`);
        expectThat(answer.body.length === 0, `the 304 to ${method} carried a body`);
      }
    },
  },
  {
    id: 's3.conditional.copy.if-match-over-unmodified-since',
    spec: 'S3 CopyObject (conditional)',
    title: 'a copy whose x-amz-copy-source-if-match holds copies although its if-unmodified-since fails; if-none-match failing with if-modified-since holding answers 412',
    source: awsApi('CopyObject'),
    async run(target) {
      const bucket = await target.makeBucket('copy-precedence');
      await putRaw(target, bucket, 'source', 'source body');
      const etag = await etagOf(target, bucket, 'source');
      const past = new Date(Date.now() - 24 * 3_600_000).toUTCString();
      const copied = await target.raw({ method: 'PUT', path: path(bucket, 'copied'), headers: { 'x-amz-copy-source': `/${bucket}/source`, 'x-amz-copy-source-if-match': etag, 'x-amz-copy-source-if-unmodified-since': past } });
      expectThat(copied.status === 200 && !copied.code, `a copy with a holding if-match and a failing if-unmodified-since answered ${describe(copied)}`);
      expectThat((await currentText(target, bucket, 'copied')) === 'source body', 'the copy does not read back as its source');
      const refused = await target.raw({ method: 'PUT', path: path(bucket, 'refused'), headers: { 'x-amz-copy-source': `/${bucket}/source`, 'x-amz-copy-source-if-none-match': etag, 'x-amz-copy-source-if-modified-since': past } });
      expectRawError(refused, 412, 'PreconditionFailed', 'a copy with a failing if-none-match and a holding if-modified-since');
      expectThat((await currentText(target, bucket, 'refused')) === undefined, 'a refused copy stored an object');
    },
  },
];
