import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '@aws-crypto/sha256-js';
import { deriveSigningKey, staticCredentials, verifyRequest, type AuthResult, type SignedRequest } from '../src/api/s3/auth/sigv4.js';
import { decodeAwsChunked } from '../src/api/s3/auth/chunked.js';
import { isSvcError } from '../src/errors/index.js';
import { codeOf } from './helpers/codes.js';

const accessKeyId = 'AKIAIOSFODNN7EXAMPLE';
const secretAccessKey = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const store = staticCredentials(accessKeyId, secretAccessKey);


describe('SigV4 verification', () => {
  it("accepts the AWS documentation's GET example (range header, empty payload)", () => {
    const request: SignedRequest = {
      method: 'GET',
      rawPath: '/test.txt',
      rawQuery: '',
      headers: {
        host: 'examplebucket.s3.amazonaws.com',
        range: 'bytes=0-9',
        'x-amz-content-sha256': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
        'x-amz-date': '20130524T000000Z',
        authorization:
          'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
      },
    };
    const result = verifyRequest(request, store, Date.UTC(2013, 4, 24, 0, 5));
    expect(result.accessKeyId).toBe(accessKeyId);
    expect(codeOf(() => verifyRequest({ ...request, headers: { ...request.headers, range: 'bytes=0-10' } }, store, Date.UTC(2013, 4, 24)))).toBe('SignatureDoesNotMatch');
    expect(codeOf(() => verifyRequest(request, store, Date.UTC(2013, 4, 24, 1)))).toBe('RequestTimeTooSkewed');
    expect(codeOf(() => verifyRequest(request, staticCredentials('other', 'x'), Date.UTC(2013, 4, 24)))).toBe('InvalidAccessKeyId');
  });

  it('verifies whatever the AWS signer signs, and refuses any tampering', async () => {
    const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials: { accessKeyId, secretAccessKey }, sha256: Sha256, uriEscapePath: false });
    const segment = fc.stringMatching(/^[a-zA-Z0-9 +~!*'()._-]{1,8}$/);
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { minLength: 1, maxLength: 3 }), fc.dictionary(fc.stringMatching(/^[a-z-]{1,6}$/), fc.stringMatching(/^[a-zA-Z0-9 /+=]{0,6}$/), { maxKeys: 3 }), async (segments, query) => {
        // Encoded as S3 clients encode paths (RFC 3986: !'()* escaped too).
        const path = `/bucket/${segments.map((part) => encodeURIComponent(part).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)).join('/')}`;
        const now = new Date();
        const signed = await signer.sign({ method: 'PUT', protocol: 'http:', hostname: 'localhost', port: 9000, path, query, headers: { host: 'localhost:9000', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } }, { signingDate: now });
        const rawQuery = new URLSearchParams(query).toString();
        const request: SignedRequest = { method: 'PUT', rawPath: path, rawQuery, headers: Object.fromEntries(Object.entries(signed.headers).map(([name, value]) => [name.toLowerCase(), value])) };
        expect(verifyRequest(request, store, now.getTime()).payload).toEqual({ kind: 'unsigned' });
        expect(codeOf(() => verifyRequest({ ...request, rawPath: `${path}x` }, store, now.getTime()))).toBe('SignatureDoesNotMatch');
        expect(codeOf(() => verifyRequest({ ...request, method: 'DELETE' }, store, now.getTime()))).toBe('SignatureDoesNotMatch');
        expect(codeOf(() => verifyRequest({ ...request, rawQuery: `${rawQuery}&extra=1` }, store, now.getTime()))).toBe('SignatureDoesNotMatch');
      }),
      { numRuns: 60 },
    );
  });

  it('refuses unsigned, malformed and host-less requests', () => {
    const base: SignedRequest = { method: 'GET', rawPath: '/', rawQuery: '', headers: { host: 'h', 'x-amz-date': '20130524T000000Z', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } };
    expect(codeOf(() => verifyRequest(base, store, Date.UTC(2013, 4, 24)))).toBe('AccessDenied');
    expect(codeOf(() => verifyRequest({ ...base, headers: { ...base.headers, authorization: 'AWS4-HMAC-SHA256 garbage' } }, store, Date.UTC(2013, 4, 24)))).toBe('AccessDenied');
    const noHost = `AWS4-HMAC-SHA256 Credential=${accessKeyId}/20130524/us-east-1/s3/aws4_request,SignedHeaders=x-amz-date,Signature=${'0'.repeat(64)}`;
    expect(codeOf(() => verifyRequest({ ...base, headers: { ...base.headers, authorization: noHost } }, store, Date.UTC(2013, 4, 24)))).toBe('AccessDenied');
  });
});

describe('headers outside the signature', () => {
  const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials: { accessKeyId, secretAccessKey }, sha256: Sha256, uriEscapePath: false });
  const lower = (headers: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  const notSigned = (action: () => unknown): string | undefined => {
    try {
      action();
      return undefined;
    } catch (error) {
      return isSvcError(error, 'AccessDenied') ? String(error.details.errorFields && (error.details.errorFields as Record<string, string>).HeadersNotSigned) : String(error);
    }
  };

  it('refuses any x-amz-* header the Authorization header does not sign, and names it', async () => {
    const now = new Date();
    const signed = await signer.sign({ method: 'PUT', protocol: 'http:', hostname: 'localhost', port: 9000, path: '/b/k', query: {}, headers: { host: 'localhost:9000', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'x-amz-meta-signed': 'yes' } }, { signingDate: now });
    const request: SignedRequest = { method: 'PUT', rawPath: '/b/k', rawQuery: '', headers: lower(signed.headers as Record<string, string>) };
    expect(verifyRequest(request, store, now.getTime()).accessKeyId).toBe(accessKeyId);
    for (const name of ['x-amz-copy-source', 'x-amz-meta-other', 'x-amz-storage-class', 'x-amz-tagging', 'x-amz-acl', 'x-amz-decoded-content-length']) {
      expect(notSigned(() => verifyRequest({ ...request, headers: { ...request.headers, [name]: 'v' } }, store, now.getTime()))).toBe(name);
    }
    expect(notSigned(() => verifyRequest({ ...request, headers: { ...request.headers, 'x-amz-acl': 'a', 'x-amz-tagging': 't' } }, store, now.getTime()))).toBe('x-amz-acl, x-amz-tagging');
    // Headers that are not x-amz-* may go unsigned, as with AWS.
    expect(verifyRequest({ ...request, headers: { ...request.headers, 'user-agent': 'any', 'content-type': 'text/plain' } }, store, now.getTime()).accessKeyId).toBe(accessKeyId);
  });

  it('on a presigned URL, x-amz-* headers must be signed too; its query parameters are', async () => {
    const now = new Date();
    const presigned = await signer.presign({ method: 'PUT', protocol: 'http:', hostname: 'localhost', port: 9000, path: '/b/k', query: {}, headers: { host: 'localhost:9000', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'x-amz-meta-hoisted': 'yes' } }, { signingDate: now, expiresIn: 60 });
    const rawQuery = new URLSearchParams(presigned.query as Record<string, string>).toString();
    expect(rawQuery).toMatch(/x-amz-meta-hoisted=yes/i);
    const request: SignedRequest = { method: 'PUT', rawPath: '/b/k', rawQuery, headers: { host: 'localhost:9000' } };
    expect(verifyRequest(request, store, now.getTime()).payload).toEqual({ kind: 'unsigned' });
    expect(notSigned(() => verifyRequest({ ...request, headers: { ...request.headers, 'x-amz-copy-source': '/other/key' } }, store, now.getTime()))).toBe('x-amz-copy-source');
    expect(verifyRequest({ ...request, headers: { ...request.headers, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } }, store, now.getTime()).payload).toEqual({ kind: 'unsigned' });
  });
});

describe('one authentication mechanism per request', () => {
  it('refuses a query signature (SigV4 or SigV2) beside an Authorization header, whichever is valid', async () => {
    const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials: { accessKeyId, secretAccessKey }, sha256: Sha256, uriEscapePath: false });
    const now = new Date();
    const presigned = await signer.presign({ method: 'GET', protocol: 'http:', hostname: 'localhost', port: 9000, path: '/b/k', query: {}, headers: { host: 'localhost:9000', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } }, { signingDate: now, expiresIn: 60 });
    const request: SignedRequest = { method: 'GET', rawPath: '/b/k', rawQuery: new URLSearchParams(presigned.query as Record<string, string>).toString(), headers: { host: 'localhost:9000' } };
    expect(verifyRequest(request, store, now.getTime()).accessKeyId).toBe(accessKeyId);
    const headerSigned = await signer.sign({ method: 'GET', protocol: 'http:', hostname: 'localhost', port: 9000, path: '/b/k', query: {}, headers: { host: 'localhost:9000', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } }, { signingDate: now });
    const validHeader = String((headerSigned.headers as Record<string, string>).authorization);
    for (const authorization of [validHeader, 'AWS4-HMAC-SHA256 garbage', 'Bearer anything', '']) {
      expect(codeOf(() => verifyRequest({ ...request, headers: { ...request.headers, authorization } }, store, now.getTime())), authorization).toBe('InvalidArgument');
    }
    for (const rawQuery of ['X-Amz-Credential=x', 'X-Amz-Algorithm=AWS4-HMAC-SHA256', 'AWSAccessKeyId=k&Signature=s&Expires=1', 'Signature=s']) {
      expect(codeOf(() => verifyRequest({ ...request, rawQuery, headers: { ...request.headers, authorization: validHeader } }, store, now.getTime())), rawQuery).toBe('InvalidArgument');
    }
  });
});

/** Builds an aws-chunked body the way a signing client does. */
function chunkedBody(payload: Buffer, chunkBytes: number, auth: AuthResult | undefined, trailer?: { name: string; value: string }): Buffer {
  const parts: Buffer[] = [];
  let previous = auth?.seedSignature ?? '';
  const sign = (data: Buffer): string => {
    const toSign = ['AWS4-HMAC-SHA256-PAYLOAD', auth!.amzDate, auth!.scope, previous, createHash('sha256').update('').digest('hex'), createHash('sha256').update(data).digest('hex')].join('\n');
    previous = createHmac('sha256', auth!.signingKey).update(toSign).digest('hex');
    return previous;
  };
  for (let offset = 0; offset <= payload.length; offset += chunkBytes) {
    const data = payload.subarray(offset, Math.min(offset + chunkBytes, payload.length));
    if (data.length === 0 && offset < payload.length) continue;
    parts.push(Buffer.from(`${data.length.toString(16)}${auth ? `;chunk-signature=${sign(data)}` : ''}\r\n`), data);
    if (data.length === 0) break;
    parts.push(Buffer.from('\r\n'));
    if (offset + chunkBytes >= payload.length) {
      parts.push(Buffer.from(`0${auth ? `;chunk-signature=${sign(Buffer.alloc(0))}` : ''}\r\n`));
      break;
    }
  }
  if (trailer) {
    const text = `${trailer.name}:${trailer.value}\n`;
    parts.push(Buffer.from(`${trailer.name}:${trailer.value}\r\n`));
    if (auth) {
      const toSign = ['AWS4-HMAC-SHA256-TRAILER', auth.amzDate, auth.scope, previous, createHash('sha256').update(text).digest('hex')].join('\n');
      parts.push(Buffer.from(`x-amz-trailer-signature:${createHmac('sha256', auth.signingKey).update(toSign).digest('hex')}\r\n`));
    }
  }
  parts.push(Buffer.from('\r\n'));
  return Buffer.concat(parts);
}

async function* split(bytes: Buffer, cuts: number[]): AsyncGenerator<Uint8Array> {
  let last = 0;
  for (const cut of [...cuts.map((c) => c % (bytes.length + 1))].sort((a, b) => a - b)) {
    yield bytes.subarray(last, cut);
    last = cut;
  }
  yield bytes.subarray(last);
}

async function decodeAll(bytes: Buffer, cuts: number[], auth: AuthResult, length?: number): Promise<{ body: Buffer; trailers: Map<string, string> }> {
  const decoded = decodeAwsChunked(split(bytes, cuts), auth, length);
  const parts: Uint8Array[] = [];
  for await (const part of decoded.body) parts.push(part);
  return { body: Buffer.concat(parts), trailers: decoded.trailers };
}

const signingKey = deriveSigningKey(secretAccessKey, '20130524', 'us-east-1', 's3');
const authFor = (kind: AuthResult['payload']['kind']): AuthResult => ({
  accessKeyId, region: 'us-east-1', scope: '20130524/us-east-1/s3/aws4_request', amzDate: '20130524T000000Z', signingKey,
  seedSignature: '4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9', payload: { kind } as AuthResult['payload'],
});

describe('aws-chunked bodies', () => {
  it("decodes the AWS documentation's signed example (64 KiB + 1 KiB of 'a')", async () => {
    const auth = authFor('streaming-signed');
    const payload = Buffer.alloc(66_560, 'a');
    const body = chunkedBody(payload, 65_536, auth);
    expect(body.toString('latin1', 0, 100)).toContain('chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648');
    expect((await decodeAll(body, [7, 1000, 70_000], auth, payload.length)).body.equals(payload)).toBe(true);
  });

  it('property: any payload, chunk size and input splitting decodes exactly, in every mode', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 5000 }), fc.integer({ min: 1, max: 2000 }), fc.array(fc.nat(), { maxLength: 6 }), fc.constantFrom('streaming-signed' as const, 'streaming-signed-trailer' as const, 'streaming-unsigned-trailer' as const), async (raw, chunkBytes, cuts, kind) => {
          const payload = Buffer.from(raw);
          const auth = authFor(kind);
          const signed = kind !== 'streaming-unsigned-trailer';
          const trailer = kind === 'streaming-signed' ? undefined : { name: 'x-amz-checksum-crc32', value: 'AAAAAA==' };
          const decoded = await decodeAll(chunkedBody(payload, chunkBytes, signed ? auth : undefined, trailer), cuts, auth, payload.length);
          expect(decoded.body.equals(payload)).toBe(true);
          if (trailer) expect(decoded.trailers.get(trailer.name)).toBe(trailer.value);
        }),
      { numRuns: 150 },
    );
  });

  it('refuses a forged chunk, a forged trailer, truncation and a wrong decoded length', async () => {
    const auth = authFor('streaming-signed-trailer');
    const payload = Buffer.alloc(3000, 'z');
    const body = chunkedBody(payload, 1000, auth, { name: 'x-amz-checksum-crc32', value: 'AAAAAA==' });
    const forgedChunk = Buffer.from(body.toString('latin1').replace(/chunk-signature=([0-9a-f])/, (_m, c: string) => `chunk-signature=${c === '0' ? '1' : '0'}`), 'latin1');
    const forgedTrailer = Buffer.from(body.toString('latin1').replace('AAAAAA==', 'AAAAAB=='), 'latin1');
    const codes: string[] = [];
    for (const [bytes, length] of [[forgedChunk, 3000], [forgedTrailer, 3000], [body.subarray(0, 1500), 3000], [body, 2999]] as const) {
      try {
        await decodeAll(bytes, [], auth, length);
        codes.push('ok');
      } catch (error) {
        codes.push(isSvcError(error) ? error.code : String(error));
      }
    }
    expect(codes).toEqual(['SignatureDoesNotMatch', 'SignatureDoesNotMatch', 'IncompleteBody', 'InvalidRequest']);
  });
});
