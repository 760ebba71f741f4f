/** SigV4 variants (header, presigned, unsigned and signed payloads, aws-chunked with trailers) and checksums. */
import { createHash } from 'node:crypto';
import { crc32 } from '@aws-crypto/crc32';
import { crc32c } from '@aws-crypto/crc32c';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type ChecksumAlgorithm } from '@aws-sdk/client-s3';
import { expectThat, type Check, type Target } from '../../runner/check.js';
import { chunkedPut, presignedUrl, type StreamingMode } from '../../runner/http.js';
import { bodyOf, expectAbsent, expectRawError, patterned, textOf } from './support.js';

const base64Of32 = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value >>> 0);
  return bytes.toString('base64');
};
const crc32Base64 = (data: Buffer) => base64Of32(crc32(data));
const crc32cBase64 = (data: Buffer) => base64Of32(crc32c(data));

/** Each checksum algorithm a PUT may carry, with how to compute it. */
const algorithms: [ChecksumAlgorithm, string, (data: Buffer) => string][] = [
  ['CRC32', 'x-amz-checksum-crc32', crc32Base64],
  ['CRC32C', 'x-amz-checksum-crc32c', crc32cBase64],
  ['SHA1', 'x-amz-checksum-sha1', (data) => createHash('sha1').update(data).digest('base64')],
  ['SHA256', 'x-amz-checksum-sha256', (data) => createHash('sha256').update(data).digest('base64')],
];

const checksumChecks: Check[] = algorithms.flatMap(([algorithm, header, compute]): Check[] => [
  {
    id: `s3.checksum.${algorithm.toLowerCase()}.stored`,
    spec: 'S3 PutObject (checksums)',
    title: `a PUT with a correct ${header} is stored and HEAD with checksum mode gives the checksum back`,
    needs: ['checksums'],
    async run(target) {
      const bucket = await target.makeBucket(`sum-${algorithm}`);
      const body = patterned(5000, algorithm.length);
      const answer = await target.raw({ method: 'PUT', path: `/${bucket}/summed`, body, headers: { [header]: compute(body) } });
      expectThat(answer.status === 200, `a PUT with a correct ${header} answered ${answer.status} ${answer.code}`);
      const head = await target.raw({ method: 'HEAD', path: `/${bucket}/summed`, headers: { 'x-amz-checksum-mode': 'ENABLED' } });
      expectThat(head.headers[header] === compute(body), `HEAD with checksum mode answered ${header}: ${head.headers[header]}, expected ${compute(body)}`);
      expectThat((await bodyOf(target, bucket, 'summed')).equals(body), 'the body read back differs');
    },
  },
  {
    id: `s3.checksum.${algorithm.toLowerCase()}.mismatch`,
    spec: 'S3 PutObject (checksums)',
    title: `a PUT whose ${header} does not match the body is refused with BadDigest and stores nothing`,
    needs: ['checksums'],
    async run(target) {
      const bucket = await target.makeBucket(`badsum-${algorithm}`);
      const answer = await target.raw({ method: 'PUT', path: `/${bucket}/summed`, body: 'the body', headers: { [header]: compute(Buffer.from('another body')) } });
      expectRawError(answer, 400, 'BadDigest', `a PUT with a wrong ${header}`);
      await expectAbsent(target, bucket, 'summed', `a PUT with a wrong ${header}`);
    },
  },
]);

/** aws-chunked uploads: [mode, chunk bytes, trailer algorithm or none]. */
const chunkedCases: [StreamingMode, number, 'crc32' | 'crc32c' | undefined][] = [
  ['STREAMING-AWS4-HMAC-SHA256-PAYLOAD', 8192, undefined],
  ['STREAMING-AWS4-HMAC-SHA256-PAYLOAD', 64 * 1024, undefined],
  ['STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER', 8192, 'crc32'],
  ['STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER', 16 * 1024, 'crc32c'],
  ['STREAMING-UNSIGNED-PAYLOAD-TRAILER', 8192, 'crc32'],
  ['STREAMING-UNSIGNED-PAYLOAD-TRAILER', 32 * 1024, 'crc32c'],
];

const trailerOf = (algorithm: 'crc32' | 'crc32c' | undefined, payload: Buffer) => (algorithm ? { name: `x-amz-checksum-${algorithm}`, value: algorithm === 'crc32' ? crc32Base64(payload) : crc32cBase64(payload) } : undefined);

const chunkedChecks: Check[] = chunkedCases.map(([mode, chunkBytes, algorithm]) => ({
  id: `s3.sigv4.${mode.toLowerCase().replace('streaming-', 'chunked-').replace('aws4-hmac-sha256-', 'signed-')}.${chunkBytes / 1024}k${algorithm ? `.${algorithm}` : ''}`,
  spec: 'S3 SigV4 (aws-chunked)',
  title: `an aws-chunked PUT in ${mode}, ${chunkBytes / 1024} KiB chunks${algorithm ? `, ${algorithm} trailer` : ''}, stores the decoded body`,
  needs: [algorithm ? 'aws-chunked-trailer' : 'aws-chunked'],
  async run(target) {
    const bucket = await target.makeBucket(`chunk-${chunkBytes}-${algorithm ?? 'none'}`);
    const payload = patterned(100_000, chunkBytes & 0xff);
    const trailer = trailerOf(algorithm, payload);
    const answer = await chunkedPut(target.options, { mode, path: `/${bucket}/chunked`, payload, chunkBytes, ...(trailer ? { trailer } : {}) });
    expectThat(answer.status === 200, `the upload answered ${answer.status} ${answer.code}`);
    expectThat((await bodyOf(target, bucket, 'chunked')).equals(payload), 'the stored body is not the decoded payload');
    if (trailer) {
      const head = await target.raw({ method: 'HEAD', path: `/${bucket}/chunked`, headers: { 'x-amz-checksum-mode': 'ENABLED' } });
      expectThat(head.headers[trailer.name] === trailer.value, `HEAD with checksum mode answered ${trailer.name}: ${head.headers[trailer.name]}, the trailer was ${trailer.value}`);
    }
  },
}));

async function headerSignedPut(target: Target, purpose: string, payloadHash: (body: string) => string, body = 'payload body') {
  const bucket = await target.makeBucket(purpose);
  return { bucket, answer: await target.raw({ method: 'PUT', path: `/${bucket}/obj`, body, payloadHash: payloadHash(body) }) };
}

const sigv4Checks: Check[] = [
  {
    id: 's3.sigv4.chunked-never-stored-raw',
    spec: 'S3 SigV4 (aws-chunked)',
    title: 'an aws-chunked PUT is stored decoded or refused, never stored with its chunk framing',
    async run(target) {
      const bucket = await target.makeBucket('chunkraw');
      const payload = Buffer.from('decoded payload');
      const answer = await chunkedPut(target.options, { mode: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD', path: `/${bucket}/framed`, payload, chunkBytes: 8192 });
      if (answer.status >= 400) return;
      const stored = await bodyOf(target, bucket, 'framed');
      expectThat(stored.equals(payload), `an accepted aws-chunked PUT stored ${JSON.stringify(stored.subarray(0, 40).toString())}`);
    },
  },
  {
    id: 's3.sigv4.unsigned-payload',
    spec: 'S3 SigV4',
    title: 'a header-signed PUT with x-amz-content-sha256: UNSIGNED-PAYLOAD is stored',
    async run(target) {
      const { bucket, answer } = await headerSignedPut(target, 'unsignedpayload', () => 'UNSIGNED-PAYLOAD');
      expectThat(answer.status === 200 && (await textOf(target, bucket, 'obj')) === 'payload body', `UNSIGNED-PAYLOAD answered ${answer.status} ${answer.code}`);
    },
  },
  {
    id: 's3.sigv4.signed-payload',
    spec: 'S3 SigV4',
    title: 'a header-signed PUT with the SHA-256 of its body is stored',
    async run(target) {
      const { bucket, answer } = await headerSignedPut(target, 'signedpayload', (body) => createHash('sha256').update(body).digest('hex'));
      expectThat(answer.status === 200 && (await textOf(target, bucket, 'obj')) === 'payload body', `a signed payload answered ${answer.status} ${answer.code}`);
    },
  },
  {
    id: 's3.sigv4.payload-mismatch',
    spec: 'S3 SigV4',
    title: 'a body whose SHA-256 differs from x-amz-content-sha256 is refused with XAmzContentSHA256Mismatch and not stored',
    async run(target) {
      const { bucket, answer } = await headerSignedPut(target, 'payloadmismatch', () => createHash('sha256').update('another body').digest('hex'));
      expectRawError(answer, 400, 'XAmzContentSHA256Mismatch', 'a PUT whose body hash differs');
      await expectAbsent(target, bucket, 'obj', 'a PUT whose body hash differs');
    },
  },
  {
    id: 's3.sigv4.anonymous',
    spec: 'Authentication',
    title: 'an unsigned request to the S3 API is refused with 403 AccessDenied',
    async run(target) {
      const bucket = await target.makeBucket('anonymous');
      const answer = await target.raw({ method: 'PUT', path: `/${bucket}/anon`, body: 'x', unsigned: true });
      expectRawError(answer, 403, 'AccessDenied', 'an unsigned PUT');
      await expectAbsent(target, bucket, 'anon', 'an unsigned PUT');
    },
  },
  {
    id: 's3.sigv4.unknown-access-key',
    spec: 'Authentication',
    title: 'a request signed with an access key the server does not know is refused with InvalidAccessKeyId',
    async run(target) {
      const answer = await (await import('../../runner/http.js')).rawS3({ ...target.options, accessKey: 'NO-SUCH-KEY-FOR-CONFORMANCE' }, { method: 'GET', path: '/' });
      expectRawError(answer, 403, 'InvalidAccessKeyId', 'a request with an unknown access key');
    },
  },
  {
    id: 's3.sigv4.clock-skew',
    spec: 'Authentication',
    title: 'a request signed an hour in the past is refused with RequestTimeTooSkewed',
    async run(target) {
      const answer = await target.raw({ method: 'GET', path: '/', signingDate: new Date(Date.now() - 3_600_000) });
      expectRawError(answer, 403, 'RequestTimeTooSkewed', 'a request signed an hour ago');
    },
  },
  {
    id: 's3.sigv4.unsigned-amz-header',
    spec: 'Authentication',
    title: 'an x-amz-meta header the signature does not cover is refused with AccessDenied and nothing is stored',
    async run(target) {
      const bucket = await target.makeBucket('unsignedhdr');
      const answer = await target.raw({ method: 'PUT', path: `/${bucket}/smuggled`, body: 'x', unsignedHeaders: { 'x-amz-meta-smuggled': 'yes' } });
      expectRawError(answer, 403, 'AccessDenied', 'a PUT with an unsigned x-amz-meta header');
      await expectAbsent(target, bucket, 'smuggled', 'a PUT with an unsigned x-amz-meta header');
    },
  },
  {
    id: 's3.sigv4.altered-signed-header',
    spec: 'Authentication',
    title: 'changing a signed header after signing is refused with SignatureDoesNotMatch',
    async run(target) {
      const bucket = await target.makeBucket('alteredhdr');
      const url = new URL(target.options.endpoint);
      const { signerFor, send } = await import('../../runner/http.js');
      const signed = await signerFor(target.options).sign({ method: 'PUT', protocol: url.protocol, hostname: url.hostname, port: Number(url.port), path: `/${bucket}/altered`, query: {}, headers: { host: url.host, 'content-type': 'text/plain', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } });
      const { host: _host, ...headers } = signed.headers as Record<string, string>;
      const answer = await send(url, 'PUT', `/${bucket}/altered`, { ...headers, 'content-type': 'text/html', 'content-length': '1' }, Buffer.from('x'));
      expectRawError(answer, 403, 'SignatureDoesNotMatch', 'a PUT whose signed Content-Type was changed');
      await expectAbsent(target, bucket, 'altered', 'a PUT with an altered header');
    },
  },
  {
    id: 's3.sigv4.chunked-forged-chunk',
    spec: 'S3 SigV4 (aws-chunked)',
    title: 'an aws-chunked PUT with one forged chunk signature is refused with SignatureDoesNotMatch and stores nothing',
    needs: ['aws-chunked'],
    async run(target) {
      const bucket = await target.makeBucket('forgedchunk');
      const answer = await chunkedPut(target.options, { mode: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD', path: `/${bucket}/forged`, payload: patterned(30_000), chunkBytes: 8192, forgeChunk: 2 });
      expectRawError(answer, 403, 'SignatureDoesNotMatch', 'a forged chunk');
      await expectAbsent(target, bucket, 'forged', 'a forged chunk');
    },
  },
  {
    id: 's3.sigv4.chunked-wrong-trailer',
    spec: 'S3 SigV4 (aws-chunked)',
    title: 'an aws-chunked PUT whose checksum trailer does not match the body is refused with BadDigest and stores nothing',
    needs: ['aws-chunked-trailer'],
    async run(target) {
      const bucket = await target.makeBucket('wrongtrailer');
      const answer = await chunkedPut(target.options, { mode: 'STREAMING-UNSIGNED-PAYLOAD-TRAILER', path: `/${bucket}/trailer`, payload: patterned(20_000), chunkBytes: 8192, trailer: { name: 'x-amz-checksum-crc32', value: crc32Base64(Buffer.from('other')) } });
      expectRawError(answer, 400, 'BadDigest', 'a wrong checksum trailer');
      await expectAbsent(target, bucket, 'trailer', 'a wrong checksum trailer');
    },
  },
  {
    id: 's3.sigv4.sdk-checksum',
    spec: 'S3 PutObject (checksums)',
    title: 'an AWS SDK PUT with ChecksumAlgorithm CRC32 is stored and a GET with checksum mode validates',
    needs: ['checksums'],
    async run(target) {
      const bucket = await target.makeBucket('sdksum');
      await target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'sdk', Body: 'checked by the sdk', ChecksumAlgorithm: 'CRC32' }));
      const object = await target.s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'sdk', ChecksumMode: 'ENABLED' }));
      expectThat((await object.Body!.transformToString()) === 'checked by the sdk' && object.ChecksumCRC32 === crc32Base64(Buffer.from('checked by the sdk')), `GET answered checksum ${object.ChecksumCRC32}`);
    },
  },
];

async function presignedObject(target: Target, purpose: string): Promise<string> {
  const bucket = await target.makeBucket(purpose);
  await target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'shared', Body: 'presigned body' }));
  return bucket;
}

const presignedChecks: Check[] = [
  {
    id: 's3.presigned.put',
    spec: 'S3 presigned URLs',
    title: 'a presigned PUT stores its body',
    needs: ['presigned'],
    async run(target) {
      const bucket = await target.makeBucket('presignput');
      const response = await fetch(await presignedUrl(target.options, 'PUT', `/${bucket}/uploaded`), { method: 'PUT', body: 'uploaded through a URL' });
      expectThat(response.status === 200, `the presigned PUT answered ${response.status}`);
      expectThat((await textOf(target, bucket, 'uploaded')) === 'uploaded through a URL', 'the presigned PUT stored another body');
    },
  },
  {
    id: 's3.presigned.head',
    spec: 'S3 presigned URLs',
    title: 'a presigned HEAD answers the object length',
    needs: ['presigned'],
    async run(target) {
      const bucket = await presignedObject(target, 'presignhead');
      const response = await fetch(await presignedUrl(target.options, 'HEAD', `/${bucket}/shared`), { method: 'HEAD' });
      expectThat(response.status === 200 && response.headers.get('content-length') === '14', `the presigned HEAD answered ${response.status}, length ${response.headers.get('content-length')}`);
    },
  },
  {
    id: 's3.presigned.tampered',
    spec: 'S3 presigned URLs',
    title: 'a presigned GET URL changed to another key is refused with 403',
    needs: ['presigned'],
    async run(target) {
      const bucket = await presignedObject(target, 'presigntamper');
      await target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'secret', Body: 'not for you' }));
      const url = (await presignedUrl(target.options, 'GET', `/${bucket}/shared`)).replace('/shared?', '/secret?');
      const response = await fetch(url);
      expectThat(response.status === 403 && !(await response.text()).includes('not for you'), `a tampered URL answered ${response.status}`);
    },
  },
  {
    id: 's3.presigned.method-bound',
    spec: 'S3 presigned URLs',
    title: 'a URL presigned for GET cannot be used to PUT',
    needs: ['presigned'],
    async run(target) {
      const bucket = await presignedObject(target, 'presignmethod');
      const response = await fetch(await presignedUrl(target.options, 'GET', `/${bucket}/shared`), { method: 'PUT', body: 'overwritten' });
      expectThat(response.status === 403, `a GET URL used for PUT answered ${response.status}`);
      expectThat((await textOf(target, bucket, 'shared')) === 'presigned body', 'the object was overwritten through a GET URL');
    },
  },
  {
    id: 's3.presigned.wrong-secret',
    spec: 'S3 presigned URLs',
    title: 'a URL presigned with the wrong secret is refused with 403 SignatureDoesNotMatch',
    needs: ['presigned'],
    async run(target) {
      const bucket = await presignedObject(target, 'presignsecret');
      const response = await fetch(await presignedUrl({ ...target.options, secretKey: `${target.options.secretKey}x` }, 'GET', `/${bucket}/shared`));
      const text = await response.text();
      expectThat(response.status === 403 && text.includes('SignatureDoesNotMatch'), `a URL signed with the wrong secret answered ${response.status}`);
    },
  },
  {
    id: 's3.sigv4.head-after-chunked',
    spec: 'S3 SigV4 (aws-chunked)',
    title: 'the length and ETag of an aws-chunked object are those of the decoded body',
    needs: ['aws-chunked'],
    async run(target) {
      const bucket = await target.makeBucket('chunkhead');
      const payload = patterned(50_000, 11);
      await chunkedPut(target.options, { mode: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD', path: `/${bucket}/c`, payload, chunkBytes: 8192 });
      const head = await target.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'c' }));
      expectThat(head.ContentLength === payload.length && head.ETag === `"${createHash('md5').update(payload).digest('hex')}"`, `HEAD answered length ${head.ContentLength} and ETag ${head.ETag}`);
    },
  },
];

export const authChecksumChecks: Check[] = [...checksumChecks, ...chunkedChecks, ...sigv4Checks, ...presignedChecks];
