/** The IAM action and resource each routed S3 request needs (src/api/s3/access.ts). */
import { describe, expect, it } from 'vitest';
import { routeS3Request } from '../src/api/s3/router.js';
import { isUnsigned, permissionsOf, resourceOf } from '../src/api/s3/access.js';

function needs(method: string, pathAndQuery: string, headers: Record<string, string> = {}): string[] | 'per-key' {
  const [rawPath, rawQuery = ''] = pathAndQuery.split('?');
  const query = new URLSearchParams(rawQuery);
  const permissions = permissionsOf(routeS3Request({ method, rawPath: rawPath!, query, headers }), query);
  return permissions === 'per-key' ? permissions : permissions.map((permission) => `${permission.action} ${resourceOf(permission)}`);
}

describe('S3 request permissions', () => {
  it('maps requests to the actions and resources AWS documents', () => {
    expect(needs('GET', '/')).toEqual(['s3:ListAllMyBuckets arn:aws:s3:::*']);
    expect(needs('PUT', '/b')).toEqual(['s3:CreateBucket arn:aws:s3:::b']);
    expect(needs('HEAD', '/b')).toEqual(['s3:ListBucket arn:aws:s3:::b']);
    expect(needs('GET', '/b?list-type=2&prefix=a/')).toEqual(['s3:ListBucket arn:aws:s3:::b']);
    expect(needs('GET', '/b?versions')).toEqual(['s3:ListBucketVersions arn:aws:s3:::b']);
    expect(needs('GET', '/b/k')).toEqual(['s3:GetObject arn:aws:s3:::b/k']);
    expect(needs('GET', '/b/k?versionId=v1')).toEqual(['s3:GetObjectVersion arn:aws:s3:::b/k']);
    expect(needs('HEAD', '/b/dir/k')).toEqual(['s3:GetObject arn:aws:s3:::b/dir/k']);
    expect(needs('PUT', '/b/k')).toEqual(['s3:PutObject arn:aws:s3:::b/k']);
    expect(needs('PUT', '/b/k', { 'x-amz-copy-source': '/src/s?versionId=v2' })).toEqual(['s3:PutObject arn:aws:s3:::b/k', 's3:GetObjectVersion arn:aws:s3:::src/s']);
    expect(needs('DELETE', '/b/k')).toEqual(['s3:DeleteObject arn:aws:s3:::b/k']);
    expect(needs('DELETE', '/b/k?versionId=v')).toEqual(['s3:DeleteObjectVersion arn:aws:s3:::b/k']);
    expect(needs('POST', '/b?delete')).toBe('per-key');
    expect(needs('POST', '/b/k?uploads')).toEqual(['s3:PutObject arn:aws:s3:::b/k']);
    expect(needs('PUT', '/b/k?partNumber=1&uploadId=u')).toEqual(['s3:PutObject arn:aws:s3:::b/k']);
    expect(needs('DELETE', '/b/k?uploadId=u')).toEqual(['s3:AbortMultipartUpload arn:aws:s3:::b/k']);
    expect(needs('GET', '/b/k?uploadId=u')).toEqual(['s3:ListMultipartUploadParts arn:aws:s3:::b/k']);
    expect(needs('GET', '/b?uploads')).toEqual(['s3:ListBucketMultipartUploads arn:aws:s3:::b']);
    expect(needs('PUT', '/b?policy')).toEqual(['s3:PutBucketPolicy arn:aws:s3:::b']);
    expect(needs('GET', '/b?policyStatus')).toEqual(['s3:GetBucketPolicyStatus arn:aws:s3:::b']);
    expect(needs('DELETE', '/b?cors')).toEqual(['s3:PutBucketCORS arn:aws:s3:::b']);
    expect(needs('PUT', '/b/k?tagging')).toEqual(['s3:PutObjectTagging arn:aws:s3:::b/k']);
    expect(needs('PUT', '/b?object-lock')).toEqual(['s3:PutBucketObjectLockConfiguration arn:aws:s3:::b']);
    expect(needs('GET', '/b?object-lock')).toEqual(['s3:GetBucketObjectLockConfiguration arn:aws:s3:::b']);
    expect(needs('PUT', '/b/k?retention')).toEqual(['s3:PutObjectRetention arn:aws:s3:::b/k']);
    expect(needs('GET', '/b/k?retention&versionId=v')).toEqual(['s3:GetObjectRetention arn:aws:s3:::b/k']);
    expect(needs('PUT', '/b/k?legal-hold')).toEqual(['s3:PutObjectLegalHold arn:aws:s3:::b/k']);
    expect(needs('GET', '/b/k?legal-hold')).toEqual(['s3:GetObjectLegalHold arn:aws:s3:::b/k']);
    expect(needs('GET', '/b?lifecycle')).toEqual(['s3:GetLifecycleConfiguration arn:aws:s3:::b']);
    expect(needs('DELETE', '/b?lifecycle')).toEqual(['s3:PutLifecycleConfiguration arn:aws:s3:::b']);
    expect(needs('GET', '/b?website')).toEqual([]);
  });

  it('tells unsigned requests from signed and presigned ones', () => {
    expect(isUnsigned({}, new URLSearchParams(''))).toBe(true);
    expect(isUnsigned({ authorization: 'AWS4-HMAC-SHA256 ...' }, new URLSearchParams(''))).toBe(false);
    expect(isUnsigned({}, new URLSearchParams('X-Amz-Signature=abc'))).toBe(false);
    expect(isUnsigned({}, new URLSearchParams('AWSAccessKeyId=a&Signature=b'))).toBe(false);
  });
});
