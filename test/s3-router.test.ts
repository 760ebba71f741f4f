import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isValidBucketName, parseCopySource, routeS3Request, type S3Endpoint } from '../src/api/s3/router.js';
import { isSvcError } from '../src/errors/index.js';
import { checkObjectKey } from '../src/object/paths.js';
import { codeOf } from './helpers/codes.js';

function route(method: string, target: string, headers: Record<string, string> = {}, host = 'localhost:9000'): S3Endpoint {
  const [rawPath, rawQuery = ''] = target.split('?', 2) as [string, string?];
  return routeS3Request({ method, rawPath, query: new URLSearchParams(rawQuery), host, headers }, { virtualHostSuffixes: ['s3.example.com'] });
}


describe('S3 router (examples from the S3 API reference)', () => {
  it('routes service, bucket and object requests, path-style', () => {
    expect(route('GET', '/')).toEqual({ kind: 'ListBuckets' });
    expect(route('PUT', '/examplebucket')).toEqual({ kind: 'CreateBucket', bucket: 'examplebucket' });
    expect(route('GET', '/examplebucket?list-type=2&prefix=photos/&delimiter=/')).toEqual({ kind: 'ListObjectsV2', bucket: 'examplebucket' });
    expect(route('GET', '/examplebucket?prefix=N&marker=Ned')).toEqual({ kind: 'ListObjectsV1', bucket: 'examplebucket' });
    expect(route('GET', '/examplebucket?versions')).toEqual({ kind: 'ListObjectVersions', bucket: 'examplebucket' });
    expect(route('GET', '/examplebucket?versioning')).toEqual({ kind: 'GetBucketVersioning', bucket: 'examplebucket' });
    expect(route('PUT', '/examplebucket?versioning')).toEqual({ kind: 'PutBucketVersioning', bucket: 'examplebucket' });
    expect(route('GET', '/examplebucket?location')).toEqual({ kind: 'GetBucketLocation', bucket: 'examplebucket' });
    expect(route('POST', '/examplebucket?delete')).toEqual({ kind: 'DeleteObjects', bucket: 'examplebucket' });
    expect(route('GET', '/examplebucket?uploads')).toEqual({ kind: 'ListMultipartUploads', bucket: 'examplebucket' });
    expect(route('DELETE', '/examplebucket/my%20key?versionId=UIORUnfndfiufdisojhr398493jfdkjFJjkndnqUifhnw89493jJFJ')).toEqual({ kind: 'DeleteObject', bucket: 'examplebucket', key: 'my key' });
    expect(route('HEAD', '/examplebucket/a/b%2Bc')).toEqual({ kind: 'HeadObject', bucket: 'examplebucket', key: 'a/b+c' });
    expect(route('POST', '/examplebucket/example-object?uploads')).toEqual({ kind: 'CreateMultipartUpload', bucket: 'examplebucket', key: 'example-object' });
    expect(route('PUT', '/examplebucket/my-movie.m2ts?partNumber=1&uploadId=VCVsb2FkIElEIGZvciBlbZZpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZR')).toEqual({
      kind: 'UploadPart', bucket: 'examplebucket', key: 'my-movie.m2ts', uploadId: 'VCVsb2FkIElEIGZvciBlbZZpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZR', partNumber: 1,
    });
    expect(route('POST', '/examplebucket/example-object?uploadId=AAAsb2FkIElEIGZvciBleGFtcGxlLW9iamVjdA')).toMatchObject({ kind: 'CompleteMultipartUpload' });
    expect(route('DELETE', '/examplebucket/example-object?uploadId=x')).toMatchObject({ kind: 'AbortMultipartUpload' });
    expect(route('GET', '/examplebucket/example-object?uploadId=x')).toMatchObject({ kind: 'ListParts' });
    expect(route('PUT', '/bucket/dst', { 'x-amz-copy-source': '/source-bucket/key%20with%20space?versionId=abc' })).toEqual({
      kind: 'CopyObject', bucket: 'bucket', key: 'dst', source: { bucket: 'source-bucket', key: 'key with space', versionId: 'abc' },
    });
    expect(route('PUT', '/bucket/dst?partNumber=2&uploadId=u', { 'x-amz-copy-source': 'src/k' })).toMatchObject({ kind: 'UploadPartCopy', partNumber: 2, source: { bucket: 'src', key: 'k' } });
    expect(route('GET', '/bucket?policy')).toEqual({ kind: 'GetBucketPolicy', bucket: 'bucket' });
    expect(route('PUT', '/bucket?policy')).toEqual({ kind: 'PutBucketPolicy', bucket: 'bucket' });
    expect(route('DELETE', '/bucket?policy')).toEqual({ kind: 'DeleteBucketPolicy', bucket: 'bucket' });
    expect(route('GET', '/bucket?policyStatus')).toEqual({ kind: 'GetBucketPolicyStatus', bucket: 'bucket' });
    expect(route('GET', '/bucket?lifecycle')).toEqual({ kind: 'GetBucketLifecycleConfiguration', bucket: 'bucket' });
    expect(route('PUT', '/bucket?lifecycle')).toEqual({ kind: 'PutBucketLifecycleConfiguration', bucket: 'bucket' });
    expect(route('DELETE', '/bucket?lifecycle')).toEqual({ kind: 'DeleteBucketLifecycle', bucket: 'bucket' });
    expect(route('GET', '/bucket?website')).toMatchObject({ kind: 'NotImplemented' });
    expect(route('GET', '/bucket?acl')).toEqual({ kind: 'GetBucketAcl', bucket: 'bucket' });
    expect(route('PUT', '/bucket/key?acl')).toEqual({ kind: 'PutObjectAcl', bucket: 'bucket', key: 'key' });
    expect(route('GET', '/bucket/key?retention')).toEqual({ kind: 'GetObjectRetention', bucket: 'bucket', key: 'key' });
    expect(route('PUT', '/bucket/key?retention&versionId=v')).toEqual({ kind: 'PutObjectRetention', bucket: 'bucket', key: 'key' });
    expect(route('GET', '/bucket/key?legal-hold')).toEqual({ kind: 'GetObjectLegalHold', bucket: 'bucket', key: 'key' });
    expect(route('PUT', '/bucket/key?legal-hold')).toEqual({ kind: 'PutObjectLegalHold', bucket: 'bucket', key: 'key' });
    expect(route('GET', '/bucket?object-lock')).toEqual({ kind: 'GetObjectLockConfiguration', bucket: 'bucket' });
    expect(route('PUT', '/bucket?object-lock')).toEqual({ kind: 'PutObjectLockConfiguration', bucket: 'bucket' });
    expect(route('GET', '/bucket/key?torrent')).toMatchObject({ kind: 'NotImplemented' });
    expect(route('DELETE', '/bucket/key?tagging')).toEqual({ kind: 'DeleteObjectTagging', bucket: 'bucket', key: 'key' });
  });

  it('routes virtual-host-style requests', () => {
    expect(route('GET', '/photo.jpg', {}, 'examplebucket.s3.example.com')).toEqual({ kind: 'GetObject', bucket: 'examplebucket', key: 'photo.jpg' });
    expect(route('GET', '/?list-type=2', {}, 'examplebucket.s3.example.com:9000')).toEqual({ kind: 'ListObjectsV2', bucket: 'examplebucket' });
  });

  it('rejects what S3 rejects', () => {
    expect(codeOf(() => route('POST', '/'))).toBe('MethodNotAllowed');
    expect(codeOf(() => route('PUT', '/b/k?partNumber=0&uploadId=u'))).toBe('InvalidArgument');
    expect(codeOf(() => route('PUT', '/b/k?partNumber=10001&uploadId=u'))).toBe('InvalidArgument');
    expect(codeOf(() => route('PUT', '/b/k?partNumber=one&uploadId=u'))).toBe('InvalidArgument');
    expect(codeOf(() => route('GET', `/b/${'k'.repeat(1025)}`))).toBe('KeyTooLongError');
    expect(codeOf(() => route('GET', '/b/%E0%A4%A'))).toBe('InvalidArgument');
    expect(codeOf(() => parseCopySource('/onlybucket'))).toBe('InvalidArgument');
  });

  it('property: any valid bucket and key survive encoding and routing; a key the layout refuses is refused by name', () => {
    const bucket = fc.stringMatching(/^[a-z0-9][a-z0-9-]{1,20}[a-z0-9]$/);
    const key = fc.oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }), fc.array(fc.constantFrom('a', '', '.', '..', 'xl.meta', '__XLDIR__', 'b__XLKEY__', '/'), { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/')));
    fc.assert(
      fc.property(bucket, key, (bucketName, keyName) => {
        const path = `/${bucketName}/${keyName.split('/').map(encodeURIComponent).join('/')}`;
        if (keyName.replace(/^\/+/, '') === '') return;
        const refusal = codeOf(() => checkObjectKey(keyName));
        if (refusal !== 'ok') expect(codeOf(() => route('GET', path))).toBe(refusal);
        else expect(route('GET', path)).toEqual({ kind: 'GetObject', bucket: bucketName, key: keyName });
      }),
    );
  });

  it('refuses keys that can never be stored with InvalidObjectName or KeyTooLongError, and routes every other name', () => {
    for (const bad of ['../../x', 'a/./b', 'a//b', '/lead', 'nul\0', 'back\\slash']) expect(codeOf(() => route('GET', `/b/${bad.split('/').map(encodeURIComponent).join('/')}`)), bad).toBe('InvalidObjectName');
    expect(codeOf(() => route('GET', `/b/a/${'s'.repeat(256)}`))).toBe('KeyTooLongError');
    expect(codeOf(() => route('GET', `/b/${'s'.repeat(250)}__XLDIR__`))).toBe('KeyTooLongError');
    expect(route('GET', `/b/a/${'s'.repeat(255)}`)).toEqual({ kind: 'GetObject', bucket: 'b', key: `a/${'s'.repeat(255)}` });
    expect(codeOf(() => parseCopySource('/b/../x'))).toBe('InvalidObjectName');
    for (const good of ['obj/xl.meta', 'r1/6f1c1a3e-2b7d-4c55-9a10-3d2e8f0b7a11/part.1', 'dir__XLDIR__', 'x__XLKEY__/', 'a b/ü/'])
      expect(route('GET', `/b/${good.split('/').map(encodeURIComponent).join('/')}`)).toEqual({ kind: 'GetObject', bucket: 'b', key: good });
  });

  it('applies the AWS bucket naming rules', () => {
    for (const good of ['abc', 'my-bucket.logs', 'a1b2c3', 'x'.repeat(63)]) expect(isValidBucketName(good), good).toBe(true);
    for (const bad of ['ab', 'x'.repeat(64), 'Upper', 'under_score', '-lead', 'trail-', 'a..b', '10.0.0.1', 'xn--abc', 'abc-s3alias', 'a.-b']) expect(isValidBucketName(bad), bad).toBe(false);
  });
});
