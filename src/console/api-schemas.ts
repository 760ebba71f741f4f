/**
 * Schemas of the console's JSON API (`/svc/console/api/`), in the admin routes' form
 * (src/api/admin/route-schema.ts): query, body and answer with an example. Every console route
 * is registered with `consoleSchema(...)`; a test fails on a route without one.
 */
import type { FastifySchema } from 'fastify';
import { boolean, fastifySchema, integer, list, noQuery, number, object, oneOfValues, openObject, statusQuery, text, type JsonSchema, type RouteSchema } from '../api/admin/route-schema.js';

export function consoleSchema(tag: string, route: RouteSchema): FastifySchema {
  return fastifySchema(route, tag);
}

const bucketParams = object({ bucket: text('bucket name') });
const sessionAnswer = object({
  accessKey: text('who is signed in (the root access key, a user\'s access key, or `sso:` and the SSO account)'),
  kind: oneOfValues(['root', 'user', 'sso'], 'how the session was opened: the root keys, a user\'s keys, or SSO'),
  policies: list(text('policy name'), 'the policies the session acts with (none for root, which may do everything)'),
  pages: list(text('page name'), 'the console pages the policies open'),
  csrfToken: text('send it as x-csrf-token with every call that changes state'),
  idleExpiresAt: text('the session ends if unused until then (ISO 8601)'),
  expiresAt: text('the session ends then at the latest (ISO 8601)'),
});
const sessionExample = { accessKey: 'svcadmin', kind: 'root', policies: [], pages: ['overview', 'buckets', 'cluster', 'operations', 'explorer', 'users', 'groups', 'service-accounts'], csrfToken: 'q3JxZ0h2', idleExpiresAt: '2026-11-25T07:00:00.000Z', expiresAt: '2026-11-25T18:00:00.000Z' };

export const sessionSchemas = {
  signIn: consoleSchema('session', {
    summary: 'Sign in',
    description: 'Compares with the root credentials, or an enabled user\'s, in constant time; sets the session cookie. Failures are throttled per client address (`TooManySignInAttempts`, 429 with Retry-After); wrong keys are `ConsoleSignInFailed`.',
    querystring: statusQuery({}),
    body: object({ accessKey: text('access key'), secretKey: text('secret key') }),
    response: sessionAnswer,
    example: { body: { accessKey: 'svcadmin', secretKey: 'svcadmin-secret' }, response: sessionExample },
  }),
  current: consoleSchema('session', { summary: 'The session', description: 'The signed-in session (refreshes its cookie).', querystring: statusQuery({}), response: sessionAnswer, example: { response: sessionExample } }),
  signOut: consoleSchema('session', { summary: 'Sign out', description: 'Ends the session on every node and clears the cookie.', querystring: statusQuery({}), response: object({ signedOut: boolean('always true') }), example: { response: { signedOut: true } } }),
};

const htmlOrRedirect = { type: 'string', description: 'a redirect, or an HTML page naming the cause of a failure' };

export const ssoSchemas = {
  status: consoleSchema('session', {
    summary: 'Whether sign-in with SSO is offered',
    description: 'configured: SVC_IDENTITY_OPENID_CONFIG_URL is set; enabled: the provider answered discovery (else the reason).',
    querystring: statusQuery({}),
    response: object({ configured: boolean('SSO is configured'), enabled: boolean('the provider is reachable'), reason: text('why it is not enabled') }, { optional: ['reason'] }),
    example: { response: { configured: true, enabled: true } },
  }),
  start: consoleSchema('session', { summary: 'Start sign-in with SSO', description: 'Redirects the browser to the provider.', querystring: statusQuery({}), response: htmlOrRedirect, example: { response: '' } }),
  callback: consoleSchema('session', {
    summary: 'Complete sign-in with SSO',
    description: "The provider's redirect back; sets the session cookie and redirects to the console.",
    querystring: statusQuery({ code: text('authorization code'), state: text('login state') }),
    response: htmlOrRedirect,
    example: { query: 'code=abc&state=xyz', response: '' },
  }),
};

export const bucketSchemas = {
  list: consoleSchema('buckets', {
    summary: 'Buckets',
    description: 'Every bucket with its creation time and versioning state.',
    querystring: statusQuery({}),
    response: object({ buckets: list(object({ name: text('bucket'), createdAt: text('ISO 8601'), versioning: oneOfValues(['unversioned', 'enabled', 'suspended'], 'versioning state'), objectLock: boolean('object lock is on (versioning stays enabled)') }), 'buckets') }),
    example: { response: { buckets: [{ name: 'photos', createdAt: '2026-11-25T06:00:00.000Z', versioning: 'enabled', objectLock: false }] } },
  }),
  create: consoleSchema('buckets', {
    summary: 'Create a bucket',
    description: "S3's bucket naming rules, each with its own message (`InvalidBucketName`); `BucketAlreadyOwnedByYou` when it exists.",
    querystring: statusQuery({}),
    body: object({ name: text('bucket name'), objectLock: boolean('turn object lock on (versioning stays enabled; needs s3:PutBucketObjectLockConfiguration and s3:PutBucketVersioning too)') }, { optional: ['objectLock'] }),
    response: object({ name: text('bucket name'), objectLock: boolean('object lock is on') }),
    example: { body: { name: 'photos' }, response: { name: 'photos', objectLock: false } },
  }),
  versioning: consoleSchema('buckets', {
    summary: 'Set versioning',
    description: 'Enables or suspends versioning.',
    querystring: statusQuery({}),
    params: bucketParams,
    body: object({ status: oneOfValues(['enabled', 'suspended'], 'new state') }),
    response: object({ name: text('bucket'), versioning: oneOfValues(['enabled', 'suspended'], 'new state') }),
    example: { params: { bucket: 'photos' }, body: { status: 'enabled' }, response: { name: 'photos', versioning: 'enabled' } },
  }),
  delete: consoleSchema('buckets', {
    summary: 'Delete a bucket',
    description: "A bucket that holds objects needs force=true and its name typed again (confirm); then every version and unfinished upload goes first (`ConfirmationRequired` otherwise).",
    querystring: statusQuery({ force: text('true: delete the contents too (true or false, else InvalidArgument)'), confirm: text("the bucket's name, typed again") }),
    params: bucketParams,
    response: object({ deleted: text('bucket'), versionsRemoved: integer('versions and delete markers removed first'), uploadsAborted: integer('unfinished uploads aborted first') }),
    example: { params: { bucket: 'photos' }, query: 'force=true&confirm=photos', response: { deleted: 'photos', versionsRemoved: 3, uploadsAborted: 0 } },
  }),
};

const objectRow = object({
  key: text('key'),
  versionId: text('version id ("null" unversioned)'),
  isLatest: boolean('the newest version'),
  deleteMarker: boolean('a delete marker'),
  sizeBytes: integer('size'),
  etag: text('ETag'),
  lastModified: text('ISO 8601'),
  storageClass: text('storage class'),
  contentType: { type: ['string', 'null'], description: 'media type' },
  userMetadata: { type: 'object', description: 'x-amz-meta-* values', additionalProperties: { type: 'string' } },
  tags: list(object({ key: text('tag key'), value: text('tag value') }), 'object tags'),
  headers: { type: 'object', description: 'stored headers a GET answers with (cache-control, content-encoding, content-disposition, content-language, expires)', additionalProperties: { type: 'string' } },
  lock: object({ legalHold: boolean('under legal hold'), mode: oneOfValues(['GOVERNANCE', 'COMPLIANCE'], 'retention mode'), retainUntil: text('retained until (ISO 8601)') }, { optional: ['mode', 'retainUntil'], description: 'object lock on this version' }),
  compression: object({ algorithm: text('block format (zstd-1m-v1)'), storedSizeBytes: integer('compressed size (before any encryption)') }, { description: 'present when the version is stored compressed (docs/compression.md)' }),
  encryption: object({ type: oneOfValues(['SSE-S3', 'SSE-KMS', 'SSE-C'], 'server-side encryption, as HEAD answers it (x-amz-server-side-encryption AES256 or aws:kms; SSE-C by its customer-key headers)'), kmsKeyId: text('SSE-KMS: the KMS key (x-amz-server-side-encryption-aws-kms-key-id)') }, { optional: ['kmsKeyId'], description: 'how the version is encrypted at rest (absent when it is not)' }),
}, { optional: ['compression', 'encryption'] });
const objectExample = { key: 'cat.jpg', versionId: 'null', isLatest: true, deleteMarker: false, sizeBytes: 5, etag: '5d41402abc4b2a76b9719d911017c592', lastModified: '2026-11-25T06:01:03.864Z', storageClass: 'STANDARD', contentType: 'image/jpeg', userMetadata: {}, tags: [], headers: {}, lock: { legalHold: false } };
const keyQuery = (extra: Record<string, JsonSchema> = {}) => statusQuery({ key: text('object key'), ...extra }, ['key']);

export const objectSchemas = {
  list: consoleSchema('objects', {
    summary: 'A page of keys and folders',
    description: 'Under a prefix, folders first; keys whose newest version is a delete marker are left out unless deleted=true.',
    querystring: statusQuery({
      prefix: text('prefix'),
      after: text('continue after this key (next of the last page; name order only)'),
      limit: text('1 to the page limit (default 200)'),
      deleted: text('true: show deleted keys (true or false, else InvalidArgument)'),
      sort: text('name (default), size or modified; size and modified for folders of at most 10,000 entries'),
      order: text('asc (default) or desc'),
      offset: text('entries skipped before the page (every order but name ascending)'),
      count: text('false: leave the total out (name order ascending; a refresh of a page whose total is known)'),
    }),
    params: bucketParams,
    response: object(
      {
        prefix: text('prefix'),
        folders: list(text('folder prefix'), 'folders'),
        objects: list(objectRow, 'newest version of each key'),
        next: text('pass as after for the next page; absent on the last'),
        nextOffset: integer('pass as offset for the next page of a sorted view; absent on the last'),
        total: integer('entries the folder shows (folders and keys), counted up to 10,000'),
        totalCapped: boolean('the folder holds more entries than the total counted'),
      },
      { optional: ['next', 'nextOffset', 'total', 'totalCapped'] },
    ),
    example: { params: { bucket: 'photos' }, query: 'prefix=2026/&limit=2', response: { prefix: '2026/', folders: ['2026/11/'], objects: [{ ...objectExample, key: '2026/cat.jpg' }], next: '2026/cat.jpg', total: 7, totalCapped: false } },
  }),
  details: consoleSchema('objects', {
    summary: "One object's versions",
    description: 'Every version and delete marker of the key, newest first (`NoSuchKey` when none).',
    querystring: keyQuery(),
    params: bucketParams,
    response: object({ bucket: text('bucket'), key: text('key'), versioning: text('bucket versioning'), versions: list(objectRow, 'newest first') }),
    example: { params: { bucket: 'photos' }, query: 'key=cat.jpg', response: { bucket: 'photos', key: 'cat.jpg', versioning: 'unversioned', versions: [objectExample] } },
  }),
  download: consoleSchema('objects', {
    summary: 'Download a version',
    description: 'Streams the bytes as an attachment.',
    querystring: keyQuery({ versionId: text('a version (default: the latest)') }),
    params: bucketParams,
    response: { type: 'string', description: 'the object bytes' },
    example: { params: { bucket: 'photos' }, query: 'key=cat.jpg', response: 'hello' },
  }),
  delete: consoleSchema('objects', {
    summary: 'Delete a selection',
    description: 'Each key gets a delete marker on a versioned bucket unless a version is named; each item answers on its own.',
    querystring: statusQuery({}),
    params: bucketParams,
    body: object({ objects: list(object({ key: text('key'), versionId: text('a version') }, { optional: ['versionId'] }), 'what to delete') }),
    response: object({
      results: list(
        object({ key: text('key'), versionId: text('the version removed or the marker made'), deleteMarker: boolean('a marker was made or removed'), error: object({ Code: text('error code'), Message: text('message') }) }, { optional: ['versionId', 'deleteMarker', 'error'] }),
        'per item',
      ),
    }),
    example: { params: { bucket: 'photos' }, body: { objects: [{ key: 'cat.jpg' }] }, response: { results: [{ key: 'cat.jpg', versionId: 'null', deleteMarker: false }] } },
  }),
  share: consoleSchema('objects', {
    summary: 'A share link',
    description: 'A presigned GET signed with the root credentials, valid 1 s to 7 days.',
    querystring: statusQuery({}),
    params: bucketParams,
    body: object({ key: text('key'), versionId: text('a version'), expiresSeconds: integer('1 to 604800') }, { optional: ['versionId'] }),
    response: object({ url: text('the link'), expiresAt: text('ISO 8601') }),
    example: { params: { bucket: 'photos' }, body: { key: 'cat.jpg', expiresSeconds: 3600 }, response: { url: 'http://127.0.0.1:9000/photos/cat.jpg?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600', expiresAt: '2026-11-25T07:00:00.000Z' } },
  }),
};

const writtenObject = object({ key: text('key'), versionId: text('version id'), etag: text('ETag'), sizeBytes: integer('size') });
const writtenExample = { key: 'cat.jpg', versionId: 'null', etag: '5d41402abc4b2a76b9719d911017c592', sizeBytes: 5 };
const uploadParams = object({ bucket: text('bucket name'), uploadId: text('upload id') });

export const uploadSchemas = {
  put: consoleSchema('uploads', {
    summary: 'Upload a small file',
    description: 'The request body (any type, Content-Length required) streams into the object.',
    querystring: keyQuery({ storageClass: text('STANDARD (default) or REDUCED_REDUNDANCY, else InvalidStorageClass'), contentType: text('media type to store') }),
    params: bucketParams,
    response: writtenObject,
    example: { params: { bucket: 'photos' }, query: 'key=cat.jpg&contentType=image/jpeg', response: writtenExample },
  }),
  create: consoleSchema('uploads', {
    summary: 'Start a multipart upload',
    description: 'Answers the upload id and the part size the browser uses.',
    querystring: statusQuery({}),
    params: bucketParams,
    body: object({ key: text('key'), storageClass: text('STANDARD (default) or REDUCED_REDUNDANCY, else InvalidStorageClass'), contentType: text('media type') }, { optional: ['storageClass', 'contentType'] }),
    response: object({ key: text('key'), uploadId: text('upload id'), partSizeBytes: integer('part size') }),
    example: { params: { bucket: 'photos' }, body: { key: 'film.mp4' }, response: { key: 'film.mp4', uploadId: 'f0e1d2c3', partSizeBytes: 8388608 } },
  }),
  part: consoleSchema('uploads', {
    summary: 'Upload a part',
    description: 'The request body (Content-Length required) streams into the part.',
    querystring: keyQuery(),
    params: object({ bucket: text('bucket name'), uploadId: text('upload id'), partNumber: text('1 to 10000') }),
    response: object({ partNumber: integer('part number'), etag: text('part ETag') }),
    example: { params: { bucket: 'photos', uploadId: 'f0e1d2c3', partNumber: '1' }, query: 'key=film.mp4', response: { partNumber: 1, etag: 'b1946ac92492d2347c6235b4d2611184' } },
  }),
  complete: consoleSchema('uploads', {
    summary: 'Complete a multipart upload',
    description: 'Commits the parts in order.',
    querystring: statusQuery({}),
    params: uploadParams,
    body: object({ key: text('key'), parts: list(object({ partNumber: integer('part number'), etag: text('part ETag') }), 'the parts') }),
    response: writtenObject,
    example: { params: { bucket: 'photos', uploadId: 'f0e1d2c3' }, body: { key: 'film.mp4', parts: [{ partNumber: 1, etag: 'b1946ac92492d2347c6235b4d2611184' }] }, response: { ...writtenExample, key: 'film.mp4' } },
  }),
  abort: consoleSchema('uploads', {
    summary: 'Abort a multipart upload',
    description: 'Removes the parts uploaded so far.',
    querystring: keyQuery(),
    params: uploadParams,
    response: object({ aborted: text('upload id') }),
    example: { params: { bucket: 'photos', uploadId: 'f0e1d2c3' }, query: 'key=film.mp4', response: { aborted: 'f0e1d2c3' } },
  }),
};

const classPlan = object(
  {
    storageClass: oneOfValues(['STANDARD', 'REDUCED_REDUNDANCY'], 'class'),
    parity: integer('M'),
    dataShards: integer('K'),
    usableFraction: number('K / N'),
    usableBytes: integer('usable bytes, with driveSize'),
    tolerates: object({ readDrives: integer('drives a set may lose and still read'), writeDrives: integer('... and still write'), readHosts: integer('hosts that may fail with every set readable') }),
  },
  { optional: ['usableBytes'] },
);

export const planSchema = consoleSchema('plan', {
  summary: 'Plan a launch',
  description: 'What `svc server <patterns>` would do in this server\'s environment (the very planLaunch of `svc plan --json`): the accepted layout, or the rejection with its rule. Starts nothing.',
  querystring: noQuery(),
  body: object({ patterns: list(text('a launch pattern such as /data/d{1...4}'), '1 to 32 patterns'), driveSize: text('each drive size, such as 8TiB') }, { optional: ['driveSize'] }),
  response: {
    anyOf: [
      object({
        accepted: { const: true, description: 'the launch is valid' },
        singleDrive: boolean('a single-drive layout'),
        pools: list(
          object({
            index: integer('pool'),
            pattern: text('pattern'),
            drives: integer('drives'),
            setDriveCount: integer('N'),
            setCount: integer('sets'),
            hosts: integer('hosts'),
            sets: list(object({ set: integer('set'), hosts: list(object({ host: text('host'), drives: integer('drives of the set on it') }), 'hosts') }), 'sets'),
            classes: list(classPlan, 'per storage class'),
          }),
          'pools',
        ),
        rawBytes: integer('raw capacity, with driveSize'),
        usableBytes: integer('usable capacity, with driveSize'),
        warnings: list(object({ message: text('warning'), fields: openObject('its values') }), 'startup warnings it would log'),
      }, { optional: ['rawBytes', 'usableBytes'] }),
      object({
        accepted: { const: false, description: 'the launch would be refused' },
        rejection: object({ code: text('error code'), rule: text('the rule broken'), variable: text('the variable at fault'), message: text('message'), line: text('what svc server would print') }, { optional: ['rule', 'variable'] }),
      }),
    ],
  },
  example: {
    body: { patterns: ['/data/d{1...4}'], driveSize: '8TiB' },
    response: {
      accepted: true,
      singleDrive: false,
      pools: [
        {
          index: 0,
          pattern: '/data/d{1...4}',
          drives: 4,
          setDriveCount: 4,
          setCount: 1,
          hosts: 1,
          sets: [{ set: 0, hosts: [{ host: 'localhost', drives: 4 }] }],
          classes: [
            { storageClass: 'STANDARD', parity: 2, dataShards: 2, usableFraction: 0.5, usableBytes: 17592186044416, tolerates: { readDrives: 2, writeDrives: 1, readHosts: 0 } },
            { storageClass: 'REDUCED_REDUNDANCY', parity: 1, dataShards: 3, usableFraction: 0.75, usableBytes: 26388279066624, tolerates: { readDrives: 1, writeDrives: 1, readHosts: 0 } },
          ],
        },
      ],
      rawBytes: 35184372088832,
      usableBytes: 17592186044416,
      warnings: [{ fields: { pool: 0, warning: 'host_failure_data_unavailable', hosts: 1 }, message: 'host_failure_data_unavailable: pool 0 spans 1 host(s)' }],
    },
  },
});

export const consoleOpenApiSchema = consoleSchema('document', {
  summary: 'This OpenAPI document',
  description: 'The OpenAPI 3.1 document of the console API, generated from its route schemas; needs no session.',
  querystring: statusQuery({}),
  response: openObject('an OpenAPI 3.1 document'),
  example: { response: { openapi: '3.1.0', info: { title: 'svc console API', version: 'v1' }, paths: {} } },
});
