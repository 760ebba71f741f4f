/** The object page's changes (routes-object-actions.ts), in the console API's form. */
import { boolean, integer, list, nullable, object, oneOfValues, statusQuery, text } from '../api/admin/route-schema.js';
import { consoleSchema } from './api-schemas.js';

const bucketParams = object({ bucket: text('bucket name') });
const written = object({ key: text('key'), versionId: text('the version written ("null" unversioned)') });
const refusal = object({ key: text('key'), versionId: text('the version'), Code: text('error code'), Message: text('message') }, { optional: ['versionId'] });
const textMap = (description: string) => ({ type: 'object', description, additionalProperties: { type: 'string' } });

export const objectActionSchemas = {
  restore: consoleSchema('objects', {
    summary: 'Restore a version as the latest',
    description: "Copies the version onto its own key through S3's CopyObject (a new latest version; the older ones stay), keeping its encryption (SSE-S3, SSE-KMS and its key) and storage class; its object lock is the bucket's default, as for any copy. SSE-C versions are refused (`InvalidRequest`), and so is the latest version (`InvalidArgument`).",
    querystring: statusQuery({}),
    params: bucketParams,
    body: object({ key: text('object key'), versionId: text('the version to restore') }),
    response: object({ key: text('key'), versionId: text('the new latest version'), restoredFrom: text('the version copied') }),
    example: { params: { bucket: 'photos' }, body: { key: 'cat.jpg', versionId: '0a1b2c3d' }, response: { key: 'cat.jpg', versionId: '9f8e7d6c', restoredFrom: '0a1b2c3d' } },
  }),
  tags: consoleSchema('objects', {
    summary: "Replace the latest version's tags",
    description: "S3's PutObjectTagging with the set (its rules: at most 10 tags, keys of 1 to 128 characters, values of at most 256, `InvalidTag` otherwise); an empty set is DeleteObjectTagging.",
    querystring: statusQuery({}),
    params: bucketParams,
    body: object({ key: text('object key'), tags: list(object({ key: text('tag key'), value: text('tag value') }), 'the new tag set (empty: remove every tag)') }),
    response: object({ key: text('key'), tags: list(object({ key: text('tag key'), value: text('tag value') }), 'the tags set') }),
    example: { params: { bucket: 'photos' }, body: { key: 'cat.jpg', tags: [{ key: 'team', value: 'web' }] }, response: { key: 'cat.jpg', tags: [{ key: 'team', value: 'web' }] } },
  }),
  metadata: consoleSchema('objects', {
    summary: "Replace the latest version's metadata",
    description: "S3's CopyObject onto itself with `x-amz-metadata-directive: REPLACE`: a new version (on a versioned bucket) with this content type, user metadata and stored headers; what the body leaves out stays as stored, and so do its tags, encryption (SSE-S3, SSE-KMS and its key) and storage class. SSE-C versions are refused (`InvalidRequest`).",
    querystring: statusQuery({}),
    params: bucketParams,
    body: object(
      {
        key: text('object key'),
        contentType: text('media type (empty: none)'),
        metadata: textMap('user metadata (x-amz-meta-<name>), names of letters, digits and - _ .'),
        headers: textMap('stored headers: cache-control, content-disposition, content-encoding, content-language, expires (a name left out is removed)'),
      },
      { optional: ['contentType', 'metadata', 'headers'] },
    ),
    response: written,
    example: { params: { bucket: 'photos' }, body: { key: 'cat.jpg', contentType: 'image/jpeg', metadata: { owner: 'ana' }, headers: { 'cache-control': 'max-age=60' } }, response: { key: 'cat.jpg', versionId: 'null' } },
  }),
  folder: consoleSchema('objects', {
    summary: 'Create a folder',
    description: "An empty object named `<prefix>/` (S3's PutObject), as other consoles make folders; the list shows it as a folder and not as an object in it.",
    querystring: statusQuery({}),
    params: bucketParams,
    body: object({ key: text('the folder: a key ending with /') }),
    response: written,
    example: { params: { bucket: 'photos' }, body: { key: '2026/holidays/' }, response: { key: '2026/holidays/', versionId: 'null' } },
  }),
  summary: consoleSchema('objects', {
    summary: 'What deleting a folder would remove',
    description: 'Every key under the prefix, counted up to 10,000 versions (`capped` beyond): keys with a live latest version, and with s3:ListBucketVersions every version and delete marker (null without it).',
    querystring: statusQuery({ prefix: text('the folder, ending with /') }, ['prefix']),
    params: bucketParams,
    response: object({
      bucket: text('bucket'),
      prefix: text('folder'),
      versioning: oneOfValues(['unversioned', 'enabled', 'suspended'], 'bucket versioning'),
      objects: integer('keys whose latest version is not a delete marker'),
      versions: nullable(integer('every version, delete markers included')),
      deleteMarkers: nullable(integer('delete markers')),
      capped: boolean('more than the counted'),
    }),
    example: { params: { bucket: 'photos' }, query: 'prefix=2026/', response: { bucket: 'photos', prefix: '2026/', versioning: 'enabled', objects: 12, versions: 15, deleteMarkers: 1, capped: false } },
  }),
  deletePrefix: consoleSchema('objects', {
    summary: "Delete a folder's keys, one batch",
    description: "Up to 200 keys under the prefix after `after`, each through S3's DeleteObject and judged on its own: a key the session may not delete is in `refused` and the rest go on; one S3 refuses (a locked version) is in `failed`. Without allVersions each live key is deleted as DeleteObject does (a delete marker on a versioned bucket); with it every version and marker goes for good. Ask again with `after: next` until no `next` comes back.",
    querystring: statusQuery({}),
    params: bucketParams,
    body: object({ prefix: text('the folder, ending with /'), allVersions: boolean('remove every version and delete marker for good'), after: text('continue after this key (the last answer\'s next)') }, { optional: ['allVersions', 'after'] }),
    response: object(
      {
        bucket: text('bucket'),
        prefix: text('folder'),
        deleted: integer('keys deleted (allVersions: versions and markers removed)'),
        keys: integer('keys looked at in this batch'),
        refused: list(refusal, 'keys the session may not delete'),
        failed: list(refusal, 'keys or versions S3 refused to delete'),
        next: text('pass as after for the next batch; absent when the folder is done'),
      },
      { optional: ['next'] },
    ),
    example: { params: { bucket: 'photos' }, body: { prefix: '2026/' }, response: { bucket: 'photos', prefix: '2026/', deleted: 11, keys: 12, refused: [{ key: '2026/keep.jpg', Code: 'AccessDenied', Message: 'No policy allows user ana s3:DeleteObject on arn:aws:s3:::photos/2026/keep.jpg' }], failed: [] } },
  }),
};
