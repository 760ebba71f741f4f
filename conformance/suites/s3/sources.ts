/**
 * Where the s3 profile's expectations come from. Every check of that profile names a source: the
 * AWS API reference page of the operation it exercises (the default, by the check's `spec`), an
 * AWS user-guide page, or a ceph/s3-tests case that agrees with AWS where AWS's pages name no
 * error code. `withSources` fills in the default and refuses a check of the s3 profile that has none.
 */
import { profileOf, type Check } from '../../runner/check.js';

const apiBase = 'https://docs.aws.amazon.com/AmazonS3/latest/API';
const guideBase = 'https://docs.aws.amazon.com/AmazonS3/latest/userguide';

/** The API reference page of an S3 operation. */
export const awsApi = (operation: string) => `${apiBase}/API_${operation}.html`;
/** A page of the S3 API reference that is not an operation (authentication, error responses). */
export const awsApiPage = (page: string) => `${apiBase}/${page}.html`;
/** A page of the S3 user guide, with an optional anchor. */
export const awsGuide = (page: string, anchor?: string) => `${guideBase}/${page}.html${anchor ? `#${anchor}` : ''}`;
/** A ceph/s3-tests case (s3tests_boto3/functional/test_s3.py). */
export const s3Tests = (name: string) => `https://github.com/ceph/s3-tests/blob/master/s3tests_boto3/functional/test_s3.py (${name})`;

/** Sources by `spec` where the spec is not simply `S3 <Operation>`. */
const bySpec: Record<string, string> = {
  'Storage classes': awsGuide('storage-class-intro'),
  'What the service does': awsGuide('Welcome', 'ConsistencyModel'),
  'Startup configuration (listing)': awsApi('ListObjectsV2'),
  Versioning: awsGuide('DeletingObjectVersions'),
  'Limits (multipart)': awsGuide('qfacts'),
  Authentication: awsApiPage('sig-v4-authenticating-requests'),
  'Resources and their fields': awsGuide('object-keys'),
  'S3 error responses': awsApiPage('ErrorResponses'),
  'S3 ListObjects (v1)': awsApi('ListObjects'),
  'S3 SigV4': awsApiPage('sig-v4-header-based-auth'),
  'S3 SigV4 (aws-chunked)': awsApiPage('sigv4-streaming'),
  'S3 presigned URLs': awsApiPage('sigv4-query-string-auth'),
  'S3 PutObject (checksums)': awsGuide('checking-object-integrity'),
  'S3 model-based runs': awsGuide('Welcome', 'ConsistencyModel'),
};

/** The default source of a check from its spec: the operation's API page for `S3 <Operation> (...)`. */
export function defaultSource(spec: string): string | undefined {
  const known = bySpec[spec];
  if (known) return known;
  const operation = /^S3 ([A-Z][A-Za-z0-9]+)(?: \(.*\))?$/.exec(spec)?.[1];
  return operation ? awsApi(operation) : undefined;
}

/** Gives every check its source; a check of the s3 profile without one is a mistake in the suite. */
export function withSources(checks: Check[]): Check[] {
  return checks.map((check) => {
    if (check.source || profileOf(check) !== 's3') return check;
    const source = defaultSource(check.spec);
    if (!source) throw new Error(`the s3 check ${check.id} names no source`);
    return { ...check, source };
  });
}
