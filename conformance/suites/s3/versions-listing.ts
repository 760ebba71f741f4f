/** Bucket versioning and delete markers; ListObjects v1 and v2 with prefixes, delimiters, paging and encoding. */
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetBucketVersioningCommand,
  HeadObjectCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
} from '@aws-sdk/client-s3';
import { errorOf, expectThat, type Check, type Target } from '../../runner/check.js';
import { expectAbsent, expectError, put, textOf } from './support.js';

async function versionedBucket(target: Target, purpose: string, status: 'Enabled' | 'Suspended' = 'Enabled'): Promise<string> {
  const bucket = await target.makeBucket(purpose);
  await target.s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: status } }));
  return bucket;
}

async function markedKey(target: Target, purpose: string): Promise<string> {
  const bucket = await versionedBucket(target, purpose);
  await put(target, bucket, 'doc', 'x');
  await target.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'doc' }));
  return bucket;
}

const versionChecks: Check[] = [
  {
    id: 's3.versioning.status',
    spec: 'S3 PutBucketVersioning',
    title: 'a new bucket has no versioning status; Enabled and Suspended are reported once set',
    async run(target) {
      const bucket = await target.makeBucket('vstatus');
      const initial = await target.s3.send(new GetBucketVersioningCommand({ Bucket: bucket }));
      expectThat(initial.Status === undefined, `a new bucket reports versioning ${initial.Status}`);
      for (const status of ['Enabled', 'Suspended'] as const) {
        await target.s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: status } }));
        const now = await target.s3.send(new GetBucketVersioningCommand({ Bucket: bucket }));
        expectThat(now.Status === status, `after setting ${status} the bucket reports ${now.Status}`);
      }
    },
  },
  {
    id: 's3.versioning.bad-status',
    spec: 'S3 PutBucketVersioning',
    title: 'a versioning status other than Enabled or Suspended is refused with a 400 and changes nothing',
    async run(target) {
      const bucket = await target.makeBucket('vbad');
      const answer = await target.raw({ method: 'PUT', path: `/${bucket}`, query: { versioning: '' }, body: '<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>Sometimes</Status></VersioningConfiguration>' });
      expectThat(answer.status === 400, `status Sometimes answered ${answer.status} ${answer.code}`);
      expectThat((await target.s3.send(new GetBucketVersioningCommand({ Bucket: bucket }))).Status === undefined, 'a refused configuration changed the status');
    },
  },
  {
    id: 's3.versioning.unversioned-ids',
    spec: 'S3 PutObject (versioning)',
    title: 'on a bucket that never had versioning, a PUT answers no version id (or null)',
    async run(target) {
      const bucket = await target.makeBucket('vnone');
      const written = await put(target, bucket, 'k', 'x');
      expectThat(written.VersionId === undefined || written.VersionId === 'null', `a PUT answered version id ${written.VersionId}`);
    },
  },
  {
    id: 's3.versioning.suspended-null',
    spec: 'S3 PutObject (versioning)',
    title: 'on a suspended bucket a PUT writes the null version, replacing the previous null version but keeping others',
    async run(target) {
      const bucket = await versionedBucket(target, 'vsusp');
      const kept = await put(target, bucket, 'doc', 'enabled version');
      await target.s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Suspended' } }));
      const first = await put(target, bucket, 'doc', 'null one');
      await put(target, bucket, 'doc', 'null two');
      expectThat(first.VersionId === 'null' || first.VersionId === undefined, `a suspended PUT answered version id ${first.VersionId}`);
      const versions = (await target.s3.send(new ListObjectVersionsCommand({ Bucket: bucket }))).Versions ?? [];
      const ids = versions.map((version) => version.VersionId).sort();
      expectThat(JSON.stringify(ids) === JSON.stringify([kept.VersionId!, 'null'].sort()), `versions are ${JSON.stringify(ids)}`);
      expectThat((await textOf(target, bucket, 'doc')) === 'null two' && (await textOf(target, bucket, 'doc', kept.VersionId)) === 'enabled version', 'the current or the kept version reads wrong');
    },
  },
  {
    id: 's3.versioning.delete-version',
    spec: 'S3 DeleteObject (versioning)',
    title: 'deleting a version by id removes it for good and the previous version becomes current',
    async run(target) {
      const bucket = await versionedBucket(target, 'vdelid');
      await put(target, bucket, 'doc', 'older');
      const newer = await put(target, bucket, 'doc', 'newer');
      await target.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'doc', VersionId: newer.VersionId }));
      expectThat((await textOf(target, bucket, 'doc')) === 'older', 'after deleting the newest version the older one is not current');
      const gone = await errorOf(target.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'doc', VersionId: newer.VersionId })));
      expectThat(gone.status === 404, `the deleted version still answers HEAD (${gone.name})`);
    },
  },
  {
    id: 's3.versioning.undelete',
    spec: 'S3 DeleteObject (versioning)',
    title: 'deleting the delete marker by its id makes the object readable again',
    async run(target) {
      const bucket = await versionedBucket(target, 'vundelete');
      await put(target, bucket, 'doc', 'revived');
      const marker = await target.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'doc' }));
      expectThat(marker.DeleteMarker && marker.VersionId, 'DELETE did not answer a delete marker with an id');
      const removed = await target.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'doc', VersionId: marker.VersionId }));
      expectThat(removed.DeleteMarker === true, 'deleting the marker did not say it was a delete marker');
      expectThat((await textOf(target, bucket, 'doc')) === 'revived', 'the object is not readable after its marker was removed');
    },
  },
  {
    id: 's3.versioning.marker-get-by-id',
    spec: 'S3 GetObject (versioning)',
    title: 'GET of a delete marker by its version id answers 405 MethodNotAllowed',
    async run(target) {
      const bucket = await versionedBucket(target, 'vmarkerget');
      await put(target, bucket, 'doc', 'x');
      const marker = await target.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'doc' }));
      const answer = await target.raw({ method: 'GET', path: `/${bucket}/doc`, query: { versionId: marker.VersionId! } });
      expectThat(answer.status === 405 && answer.code === 'MethodNotAllowed', `GET of a delete marker answered ${answer.status} ${answer.code}`);
      expectThat(answer.headers['x-amz-delete-marker'] === 'true', 'the answer lacks x-amz-delete-marker: true');
    },
  },
  {
    id: 's3.versioning.current-is-marker',
    spec: 'S3 GetObject (versioning)',
    title: 'GET and HEAD of a key whose latest version is a delete marker answer 404 (NoSuchKey on GET)',
    async run(target) {
      const bucket = await markedKey(target, 'vmarkerget404');
      const get = await target.raw({ method: 'GET', path: `/${bucket}/doc` });
      const head = await target.raw({ method: 'HEAD', path: `/${bucket}/doc` });
      expectThat(get.status === 404 && get.code === 'NoSuchKey' && head.status === 404, `GET answered ${get.status} ${get.code}, HEAD ${head.status}`);
    },
  },
  {
    id: 's3.versioning.current-is-marker-header',
    spec: 'S3 GetObject (versioning)',
    title: 'that 404 carries x-amz-delete-marker: true on GET and HEAD, so a client can tell deleted from never written',
    async run(target) {
      const bucket = await markedKey(target, 'vmarkerheader');
      for (const method of ['GET', 'HEAD']) {
        const answer = await target.raw({ method, path: `/${bucket}/doc` });
        expectThat(answer.headers['x-amz-delete-marker'] === 'true', `${method} of a deleted key answered ${answer.status} without x-amz-delete-marker: true`);
      }
    },
  },
  {
    id: 's3.versioning.no-such-version',
    spec: 'S3 GetObject (versioning)',
    title: 'GET of a version id that does not exist answers 404 NoSuchVersion (or 400 for a malformed id)',
    async run(target) {
      const bucket = await versionedBucket(target, 'vnoversion');
      await put(target, bucket, 'doc', 'x');
      const answer = await target.raw({ method: 'GET', path: `/${bucket}/doc`, query: { versionId: '00000000-0000-0000-0000-000000000000' } });
      expectThat((answer.status === 404 && answer.code === 'NoSuchVersion') || (answer.status === 400 && answer.code === 'InvalidArgument'), `GET of an unknown version answered ${answer.status} ${answer.code}`);
    },
  },
  {
    id: 's3.versioning.list-hides-marked',
    spec: 'S3 ListObjectsV2 (versioning)',
    title: 'ListObjectsV2 leaves out keys whose latest version is a delete marker',
    async run(target) {
      const bucket = await versionedBucket(target, 'vlisthide');
      for (const key of ['a', 'b', 'c']) await put(target, bucket, key, key);
      await target.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'b' }));
      const keys = ((await target.s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map((object) => object.Key);
      expectThat(JSON.stringify(keys) === JSON.stringify(['a', 'c']), `ListObjectsV2 shows ${JSON.stringify(keys)}`);
    },
  },
  {
    id: 's3.versioning.list-versions-order',
    spec: 'S3 ListObjectVersions',
    title: 'ListObjectVersions gives every version of a key newest first, exactly one marked IsLatest',
    async run(target) {
      const bucket = await versionedBucket(target, 'vorder');
      const ids = [];
      for (const body of ['1', '2', '3']) ids.push((await put(target, bucket, 'doc', body)).VersionId);
      const versions = (await target.s3.send(new ListObjectVersionsCommand({ Bucket: bucket }))).Versions ?? [];
      const seen = versions.map((version) => version.VersionId);
      expectThat(JSON.stringify(seen) === JSON.stringify([...ids].reverse()), `versions listed as ${JSON.stringify(seen)}, written ${JSON.stringify(ids)}`);
      expectThat(versions.filter((version) => version.IsLatest).map((version) => version.VersionId).join() === ids[2], 'IsLatest is not on the newest version alone');
    },
  },
  {
    id: 's3.versioning.list-versions-paging',
    spec: 'S3 ListObjectVersions',
    title: 'paging ListObjectVersions with key and version-id markers returns every version once',
    async run(target) {
      const bucket = await versionedBucket(target, 'vpaging');
      const written = new Set<string>();
      for (const key of ['a', 'b']) for (const body of ['1', '2', '3']) written.add(`${key}@${(await put(target, bucket, key, body)).VersionId}`);
      const seen: string[] = [];
      let keyMarker: string | undefined;
      let versionMarker: string | undefined;
      for (let pages = 0; pages < 20; pages += 1) {
        const page = await target.s3.send(new ListObjectVersionsCommand({ Bucket: bucket, MaxKeys: 2, KeyMarker: keyMarker, VersionIdMarker: versionMarker }));
        seen.push(...(page.Versions ?? []).map((version) => `${version.Key}@${version.VersionId}`));
        if (!page.IsTruncated) break;
        keyMarker = page.NextKeyMarker;
        versionMarker = page.NextVersionIdMarker;
      }
      expectThat(seen.length === written.size && seen.every((entry) => written.has(entry)), `paging returned ${JSON.stringify(seen)}`);
    },
  },
  {
    id: 's3.versioning.list-versions-prefix',
    spec: 'S3 ListObjectVersions',
    title: 'ListObjectVersions with a prefix shows only that prefix, markers included',
    async run(target) {
      const bucket = await versionedBucket(target, 'vprefix');
      for (const key of ['logs/a', 'logs/b', 'data/c']) await put(target, bucket, key, key);
      await target.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'logs/b' }));
      const page = await target.s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: 'logs/' }));
      const keys = [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])].map((entry) => entry.Key).sort();
      expectThat(JSON.stringify(keys) === JSON.stringify(['logs/a', 'logs/b', 'logs/b']), `prefix logs/ shows ${JSON.stringify(keys)}`);
    },
  },
  {
    id: 's3.versioning.delete-objects-markers',
    spec: 'S3 DeleteObjects (versioning)',
    title: 'DeleteObjects on a versioned bucket adds delete markers and keeps the versions',
    async run(target) {
      const bucket = await versionedBucket(target, 'vbatch');
      const written = await put(target, bucket, 'doc', 'kept');
      const answer = await target.s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: [{ Key: 'doc' }] } }));
      expectThat(answer.Deleted?.[0]?.DeleteMarker === true && answer.Deleted[0].DeleteMarkerVersionId, `DeleteObjects reported ${JSON.stringify(answer.Deleted)}`);
      await expectAbsent(target, bucket, 'doc', 'a versioned DeleteObjects');
      expectThat((await textOf(target, bucket, 'doc', written.VersionId)) === 'kept', 'the version behind the marker is not readable');
    },
  },
  {
    id: 's3.versioning.copy-old-version',
    spec: 'S3 CopyObject (versioning)',
    title: 'a copy from an older version id copies that version',
    async run(target) {
      const bucket = await versionedBucket(target, 'vcopy');
      const old = await put(target, bucket, 'doc', 'old body');
      await put(target, bucket, 'doc', 'new body');
      await target.s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'restored', CopySource: `${bucket}/doc?versionId=${old.VersionId}` }));
      expectThat((await textOf(target, bucket, 'restored')) === 'old body', 'the copy is not of the old version');
    },
  },
];

/** Keys every listing check writes; each case lists them one way. */
const tree = ['a.txt', 'docs/intro.md', 'docs/guide/one.md', 'docs/guide/two.md', 'logs-2024/x', 'logs-2025/y', 'photos/2024/a.jpg', 'z'];

interface ListingCase {
  name: string;
  title: string;
  request: { Prefix?: string; Delimiter?: string; StartAfter?: string };
  keys: string[];
  prefixes: string[];
}

const listingCases: ListingCase[] = [
  { name: 'all', title: 'without prefix or delimiter every key is listed in byte order', request: {}, keys: [...tree].sort(), prefixes: [] },
  { name: 'delimiter', title: "with delimiter '/' top-level keys are listed and folders become common prefixes", request: { Delimiter: '/' }, keys: ['a.txt', 'z'], prefixes: ['docs/', 'logs-2024/', 'logs-2025/', 'photos/'] },
  { name: 'prefix', title: 'a prefix keeps only the keys that start with it', request: { Prefix: 'docs/' }, keys: ['docs/guide/one.md', 'docs/guide/two.md', 'docs/intro.md'], prefixes: [] },
  { name: 'prefix-delimiter', title: 'a prefix with a delimiter rolls up the next level only', request: { Prefix: 'docs/', Delimiter: '/' }, keys: ['docs/intro.md'], prefixes: ['docs/guide/'] },
  { name: 'partial-prefix', title: 'a prefix that ends inside a segment matches keys and folders alike', request: { Prefix: 'logs', Delimiter: '/' }, keys: [], prefixes: ['logs-2024/', 'logs-2025/'] },
  { name: 'other-delimiter', title: "a delimiter other than '/' ('-') rolls up at its first occurrence", request: { Delimiter: '-' }, keys: ['a.txt', 'docs/guide/one.md', 'docs/guide/two.md', 'docs/intro.md', 'photos/2024/a.jpg', 'z'], prefixes: ['logs-'] },
  { name: 'multi-char-delimiter', title: "a delimiter of several characters ('/g') rolls up where it occurs", request: { Delimiter: '/g' }, keys: ['a.txt', 'docs/intro.md', 'logs-2024/x', 'logs-2025/y', 'photos/2024/a.jpg', 'z'], prefixes: ['docs/g'] },
  { name: 'start-after', title: 'StartAfter lists only keys after it', request: { StartAfter: 'logs-2024/x' }, keys: ['logs-2025/y', 'photos/2024/a.jpg', 'z'], prefixes: [] },
  { name: 'no-match', title: 'a prefix nothing starts with lists nothing, not truncated', request: { Prefix: 'nothing/' }, keys: [], prefixes: [] },
];

async function treeBucket(target: Target, purpose: string): Promise<string> {
  const bucket = await target.makeBucket(purpose);
  for (const key of tree) await put(target, bucket, key, key);
  return bucket;
}

/** Pages through ListObjectsV2 (or v1) with `maxKeys` per page; every entry once. */
async function listAll(target: Target, bucket: string, request: ListingCase['request'], maxKeys: number, version: 1 | 2): Promise<{ keys: string[]; prefixes: string[]; pages: number }> {
  const keys: string[] = [];
  const prefixes: string[] = [];
  let token: string | undefined;
  for (let pages = 1; pages <= 50; pages += 1) {
    if (version === 2) {
      const page = await target.s3.send(new ListObjectsV2Command({ Bucket: bucket, ...request, MaxKeys: maxKeys, ContinuationToken: token }));
      keys.push(...(page.Contents ?? []).map((object) => object.Key!));
      prefixes.push(...(page.CommonPrefixes ?? []).map((entry) => entry.Prefix!));
      expectThat(page.KeyCount === (page.Contents?.length ?? 0) + (page.CommonPrefixes?.length ?? 0), `KeyCount ${page.KeyCount} differs from the entries of the page`);
      if (!page.IsTruncated) return { keys, prefixes, pages };
      expectThat(page.NextContinuationToken, 'a truncated page has no NextContinuationToken');
      token = page.NextContinuationToken;
    } else {
      const { StartAfter: _unused, ...rest } = request;
      const page = await target.s3.send(new ListObjectsCommand({ Bucket: bucket, ...rest, MaxKeys: maxKeys, Marker: token }));
      keys.push(...(page.Contents ?? []).map((object) => object.Key!));
      prefixes.push(...(page.CommonPrefixes ?? []).map((entry) => entry.Prefix!));
      if (!page.IsTruncated) return { keys, prefixes, pages };
      token = page.NextMarker ?? page.Contents?.at(-1)?.Key;
      expectThat(token, 'a truncated v1 page gives no marker to continue from');
    }
  }
  throw new Error('the listing did not end within 50 pages');
}

const listingChecks: Check[] = listingCases.flatMap((listing) =>
  ([[2, 1000], [2, 2], [1, 3]] as const)
    .filter(([version, pageSize]) => pageSize === 1000 || ['all', 'delimiter', 'prefix-delimiter'].includes(listing.name) || version === 1)
    .filter(([version]) => version === 2 || listing.name !== 'start-after')
    .map(([version, pageSize]) => ({
      id: `s3.list.v${version}.${listing.name}${pageSize < 1000 ? `.pages-of-${pageSize}` : ''}`,
      spec: version === 2 ? 'S3 ListObjectsV2' : 'S3 ListObjects (v1)',
      title: `${listing.title}${pageSize < 1000 ? `, in pages of ${pageSize}` : ''} (v${version})`,
      async run(target: Target) {
        const bucket = await treeBucket(target, `list-${version}-${listing.name}-${pageSize}`);
        const got = await listAll(target, bucket, listing.request, pageSize, version);
        expectThat(JSON.stringify(got.keys) === JSON.stringify(listing.keys), `keys ${JSON.stringify(got.keys)}, expected ${JSON.stringify(listing.keys)}`);
        expectThat(JSON.stringify(got.prefixes) === JSON.stringify(listing.prefixes), `common prefixes ${JSON.stringify(got.prefixes)}, expected ${JSON.stringify(listing.prefixes)}`);
        if (pageSize < 1000) expectThat(got.pages >= Math.ceil((listing.keys.length + listing.prefixes.length) / pageSize), `${got.pages} pages for ${listing.keys.length + listing.prefixes.length} entries of ${pageSize} per page`);
      },
    })),
);

const moreListingChecks: Check[] = [
  {
    id: 's3.list.v2.encoding-url',
    spec: 'S3 ListObjectsV2',
    title: 'with encoding-type=url keys and prefixes come back URL-encoded and decode to the stored keys',
    async run(target) {
      const bucket = await target.makeBucket('listenc');
      const keys = ['a b/c', 'ü+x', 'tab\there'];
      for (const key of keys) await put(target, bucket, key, 'x');
      const answer = await target.raw({ method: 'GET', path: `/${bucket}`, query: { 'list-type': '2', 'encoding-type': 'url' } });
      expectThat(answer.status === 200 && answer.xml.ListBucketResult?.EncodingType === 'url', `the listing answered ${answer.status} without EncodingType url`);
      const contents = [answer.xml.ListBucketResult.Contents].flat();
      const raw = contents.map((entry: { Key: string }) => entry.Key);
      expectThat(raw.every((key: string) => !/[ \t]/.test(key)), `keys are not URL-encoded: ${JSON.stringify(raw)}`);
      const decoded = raw.map((key: string) => decodeURIComponent(key.replace(/\+/g, ' '))).sort();
      expectThat(JSON.stringify(decoded) === JSON.stringify([...keys].sort()), `decoded keys ${JSON.stringify(decoded)}`);
    },
  },
  {
    id: 's3.list.v2.max-keys-zero',
    spec: 'S3 ListObjectsV2',
    title: 'max-keys=0 answers an empty page',
    async run(target) {
      const bucket = await treeBucket(target, 'listzero');
      const page = await target.s3.send(new ListObjectsV2Command({ Bucket: bucket, MaxKeys: 0 }));
      expectThat((page.Contents ?? []).length === 0 && (page.KeyCount ?? 0) === 0, `max-keys=0 listed ${page.Contents?.length} keys`);
    },
  },
  {
    id: 's3.list.v2.bad-token',
    spec: 'S3 ListObjectsV2',
    title: 'a continuation token the server never issued is refused with InvalidArgument',
    async run(target) {
      const bucket = await target.makeBucket('listtoken');
      await expectError(target.s3.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: '%%%not-a-token%%%' })), 'InvalidArgument', 'a forged continuation token', 400);
    },
  },
  {
    id: 's3.list.v2.negative-max-keys',
    spec: 'S3 ListObjectsV2',
    title: 'a negative max-keys is refused with InvalidArgument',
    async run(target) {
      const bucket = await target.makeBucket('listneg');
      const answer = await target.raw({ method: 'GET', path: `/${bucket}`, query: { 'list-type': '2', 'max-keys': '-1' } });
      expectThat(answer.status === 400 && answer.code === 'InvalidArgument', `max-keys=-1 answered ${answer.status} ${answer.code}`);
    },
  },
  {
    id: 's3.list.v2.sizes-and-etags',
    spec: 'S3 ListObjectsV2',
    title: 'listed sizes and ETags are those of the stored objects',
    async run(target) {
      const bucket = await target.makeBucket('listsize');
      const written = await put(target, bucket, 'sized', 'x'.repeat(777));
      const entry = (await target.s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents?.[0];
      expectThat(entry?.Size === 777 && entry.ETag === written.ETag, `listed size ${entry?.Size} and ETag ${entry?.ETag}, written 777 and ${written.ETag}`);
      expectThat(entry.StorageClass === undefined || entry.StorageClass === 'STANDARD', `listed class ${entry.StorageClass}`);
    },
  },
  {
    id: 's3.list.v2.empty-bucket',
    spec: 'S3 ListObjectsV2',
    title: 'an empty bucket lists no keys and is not truncated',
    async run(target) {
      const bucket = await target.makeBucket('listempty');
      const page = await target.s3.send(new ListObjectsV2Command({ Bucket: bucket }));
      expectThat((page.Contents ?? []).length === 0 && !page.IsTruncated && page.KeyCount === 0, `an empty bucket listed ${page.Contents?.length} keys, truncated ${page.IsTruncated}`);
    },
  },
  {
    id: 's3.list.v2.after-delete',
    spec: 'S3 ListObjectsV2',
    title: 'a deleted key is gone from the next listing and an added one is in it',
    async run(target) {
      const bucket = await treeBucket(target, 'listchange');
      await target.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'docs/intro.md' }));
      await put(target, bucket, 'docs/new.md', 'new');
      const keys = ((await target.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'docs/' }))).Contents ?? []).map((object) => object.Key);
      expectThat(JSON.stringify(keys) === JSON.stringify(['docs/guide/one.md', 'docs/guide/two.md', 'docs/new.md']), `after the change the listing shows ${JSON.stringify(keys)}`);
    },
  },
];

export const versionListingChecks: Check[] = [...versionChecks.map((check) => ({ ...check, needs: ['versioning' as const] })), ...listingChecks, ...moreListingChecks];
