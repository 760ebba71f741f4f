/**
 * Key-namespace property: every key is stored, listed, read and deleted on its own, whatever its
 * segments look like. Random PUT / overwrite / DELETE sequences over keys drawn to collide
 * (parents and children, UUID segments, a store's internal file names such as `xl.meta` and
 * `part.N`, the `__XLDIR__` / `__XLKEY__` suffixes, trailing slashes, unicode) run against a
 * live endpoint; afterwards every acknowledged key reads back its last body, every deleted key is
 * NoSuchKey, and ListObjectsV2 (without a delimiter, with '/', with a prefix, at any page size)
 * returns exactly the live keys in UTF-8 byte order. A white-box caller may say which data
 * directories an object has (`dataDirsOf`), so that keys reuse the very UUIDs a store uses for
 * its own directories. A failure reports the seed that replays it and the operations.
 *
 * Used by test/key-namespace-property.test.ts and by the conformance suite (conformance/suites/s3.ts).
 */
import fc from 'fast-check';
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

export interface KeyNamespaceOptions {
  s3: S3Client;
  /** An empty bucket; it is left empty again after every run. */
  bucket: string;
  seed: number;
  numRuns: number;
  /** A body size that is stored outside the metadata (with a data directory) on the target. */
  largeBodyBytes: number;
  /** White-box: the data-directory names an object has on the drives (UUIDs). */
  dataDirsOf?: (bucket: string, key: string) => Promise<string[]>;
}

const fixedUuids = ['6f1c1a3e-2b7d-4c55-9a10-3d2e8f0b7a11', '0b9d5c2e-8e44-4f0f-8b3c-5a7a9d1e2f33'];
/** A segment token that becomes a data-directory name of a live object when one is known. */
const dataDirToken = '@data-dir';
const segments = ['a', 'r1', 'ü', '日本', 'a b', 'xl.meta', 'part.1', 'part.2', '__XLDIR__', 'd__XLDIR__', 'e__XLKEY__', '__XLKEY__', 'x.txt', ...fixedUuids, dataDirToken, dataDirToken];

interface Operation {
  kind: 'put' | 'delete';
  /** Start from a live key (its child, or itself) instead of from the bucket root. */
  fromExisting: boolean;
  extra: string[];
  trailingSlash: boolean;
  size: 'empty' | 'small' | 'large';
  pick: number;
}

const operation: fc.Arbitrary<Operation> = fc.record({
  kind: fc.constantFrom<'put' | 'delete'>('put', 'put', 'delete'),
  fromExisting: fc.boolean(),
  extra: fc.array(fc.constantFrom(...segments), { minLength: 0, maxLength: 2 }),
  trailingSlash: fc.boolean(),
  size: fc.constantFrom<'empty' | 'small' | 'large'>('empty', 'small', 'large', 'large'),
  pick: fc.nat(1000),
});

const run = fc.record({ operations: fc.array(operation, { minLength: 1, maxLength: 12 }), pageSize: fc.constantFrom(1, 2, 3, 1000) });

/** Runs the property; throws an Error naming the seed and the operations on the first failure. */
export async function checkKeyNamespace(options: KeyNamespaceOptions): Promise<void> {
  let log: string[] = [];
  const result = await fc.check(
    fc.asyncProperty(run, async ({ operations, pageSize }) => {
      log = [];
      const live = new Map<string, Buffer>();
      const deleted = new Set<string>();
      try {
        for (const [index, op] of operations.entries()) await apply(options, op, index, live, deleted, log);
        await verify(options, live, deleted, pageSize);
      } catch (error) {
        await empty(options, live).catch(() => undefined);
        throw error;
      }
      await empty(options, live);
    }),
    // Each run costs real requests: the failing run is reported as it is, not shrunk.
    { seed: options.seed, numRuns: options.numRuns, endOnFailure: true },
  );
  if (result.failed) {
    const cause = result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
    throw new Error(`key-namespace property failed (seed ${result.seed}, path ${result.counterexamplePath}; replay with this seed): ${cause}\noperations:\n  ${log.join('\n  ')}`);
  }
}

async function apply(options: KeyNamespaceOptions, op: Operation, index: number, live: Map<string, Buffer>, deleted: Set<string>, log: string[]): Promise<void> {
  const key = await keyOf(options, op, [...live.keys()]);
  if (op.kind === 'put') {
    const body = bodyOf(options, op, index);
    log.push(`PUT ${JSON.stringify(key)} (${body.length} bytes)`);
    await options.s3.send(new PutObjectCommand({ Bucket: options.bucket, Key: key, Body: body }));
    live.set(key, body);
    deleted.delete(key);
  } else {
    log.push(`DELETE ${JSON.stringify(key)}`);
    await options.s3.send(new DeleteObjectCommand({ Bucket: options.bucket, Key: key }));
    live.delete(key);
    deleted.add(key);
  }
}

async function keyOf(options: KeyNamespaceOptions, op: Operation, liveKeys: string[]): Promise<string> {
  const base = op.fromExisting && liveKeys.length > 0 ? liveKeys[op.pick % liveKeys.length]! : '';
  const resolved: string[] = [];
  for (const segment of op.extra) resolved.push(segment === dataDirToken ? await someDataDir(options, liveKeys, op.pick) : segment);
  let key = base === '' ? resolved.join('/') || 'a' : resolved.length === 0 ? base : `${base.endsWith('/') ? base : `${base}/`}${resolved.join('/')}`;
  if (op.trailingSlash && op.kind === 'put' && !key.endsWith('/') && resolved.length > 0) key = `${key}/`;
  return key;
}

/** A data directory of some live object (white-box), else a fixed UUID. */
async function someDataDir(options: KeyNamespaceOptions, liveKeys: string[], pick: number): Promise<string> {
  if (options.dataDirsOf) {
    for (let offset = 0; offset < liveKeys.length; offset += 1) {
      const dirs = await options.dataDirsOf(options.bucket, liveKeys[(pick + offset) % liveKeys.length]!);
      if (dirs.length > 0) return dirs[pick % dirs.length]!;
    }
  }
  return fixedUuids[pick % fixedUuids.length]!;
}

function bodyOf(options: KeyNamespaceOptions, op: Operation, index: number): Buffer {
  const sizeBytes = op.size === 'empty' ? 0 : op.size === 'small' ? 1 + (op.pick % 40) : options.largeBodyBytes + op.pick;
  const body = Buffer.alloc(sizeBytes, op.pick % 251);
  if (sizeBytes > 0) body.write(`#${index}.${op.pick}#`.slice(0, sizeBytes));
  return body;
}

async function verify(options: KeyNamespaceOptions, live: Map<string, Buffer>, deleted: Set<string>, pageSize: number): Promise<void> {
  for (const [key, body] of live) {
    const read = await options.s3.send(new GetObjectCommand({ Bucket: options.bucket, Key: key })).then(
      async (object) => Buffer.from(await object.Body!.transformToByteArray()),
      (error: { name?: string }) => `error ${error.name}`,
    );
    if (typeof read === 'string' || !read.equals(body)) throw new Error(`GET ${JSON.stringify(key)} returned ${typeof read === 'string' ? read : `${read.length} other bytes`}, not its last body (${body.length} bytes)`);
  }
  for (const key of deleted) {
    const outcome = await options.s3.send(new GetObjectCommand({ Bucket: options.bucket, Key: key })).then(() => 'found', (error: { name?: string }) => error.name);
    if (outcome !== 'NoSuchKey') throw new Error(`GET of deleted key ${JSON.stringify(key)} answered ${outcome}, not NoSuchKey`);
  }
  const keys = [...live.keys()];
  const firstSegments = [...new Set(keys.filter((key) => key.includes('/')).map((key) => key.slice(0, key.indexOf('/') + 1)))];
  for (const [prefix, delimiter] of [['', undefined], ['', '/'], ...firstSegments.map((prefix) => [prefix, '/']), ...firstSegments.map((prefix) => [prefix, undefined])] as [string, string | undefined][]) {
    const listed = await listAll(options, prefix, delimiter, pageSize);
    const expected = expectedListing(keys, prefix, delimiter);
    const same = JSON.stringify(listed) === JSON.stringify(expected);
    if (!same) throw new Error(`ListObjectsV2 prefix ${JSON.stringify(prefix)} delimiter ${JSON.stringify(delimiter)} page ${pageSize}: got ${JSON.stringify(listed)}, expected ${JSON.stringify(expected)}`);
  }
}

interface Listing {
  contents: string[];
  prefixes: string[];
}

async function listAll(options: KeyNamespaceOptions, prefix: string, delimiter: string | undefined, pageSize: number): Promise<Listing> {
  const listing: Listing = { contents: [], prefixes: [] };
  let token: string | undefined;
  for (let page = 0; page < 1000; page += 1) {
    const answer = await options.s3.send(new ListObjectsV2Command({ Bucket: options.bucket, Prefix: prefix, Delimiter: delimiter, MaxKeys: pageSize, ContinuationToken: token }));
    listing.contents.push(...(answer.Contents ?? []).map((item) => item.Key!));
    listing.prefixes.push(...(answer.CommonPrefixes ?? []).map((item) => item.Prefix!));
    if (!answer.IsTruncated) return listing;
    token = answer.NextContinuationToken;
  }
  throw new Error('ListObjectsV2 did not finish within 1000 pages');
}

const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

export function expectedListing(keys: string[], prefix: string, delimiter: string | undefined): Listing {
  const contents: string[] = [];
  const prefixes = new Set<string>();
  for (const key of keys) {
    if (!key.startsWith(prefix)) continue;
    const at = delimiter === undefined ? -1 : key.indexOf(delimiter, prefix.length);
    if (at >= 0) prefixes.add(key.slice(0, at + delimiter!.length));
    else contents.push(key);
  }
  return { contents: contents.sort(byteOrder), prefixes: [...prefixes].sort(byteOrder) };
}

/** Deletes every live key, then requires the bucket to list empty. */
async function empty(options: KeyNamespaceOptions, live: Map<string, Buffer>): Promise<void> {
  for (const key of live.keys()) await options.s3.send(new DeleteObjectCommand({ Bucket: options.bucket, Key: key }));
  const left = await options.s3.send(new ListObjectsV2Command({ Bucket: options.bucket }));
  if ((left.KeyCount ?? 0) > 0) throw new Error(`after deleting every live key the bucket still lists ${JSON.stringify((left.Contents ?? []).map((item) => item.Key))}`);
}
