/**
 * Model-based runs: fast-check draws sequences of S3 commands (PUT, overwrite, GET with ranges,
 * copy, delete, delete of one version, multipart upload, versioning on and suspended, listings
 * with random prefixes, delimiters and page sizes, version listings) and runs each against the
 * target and against the in-memory model (s3-model.ts); every answer must agree. A disagreement is
 * shrunk to a shortest sequence and reported with the seed that replays it (`--seed`). `--runs`
 * sets how many sequences, `--budget` how long to keep starting new ones.
 */
import fc from 'fast-check';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { CheckFailure, errorOf, type Check, type Target } from '../runner/check.js';
import { BucketModel, byteOrder } from './s3-model.js';

interface Real {
  s3: S3Client;
  bucket: string;
}

type Command = fc.AsyncCommand<BucketModel, Real>;

const keys = ['a', 'a/b', 'a/b/c', 'ab', 'c/d/e', 'c/d', 'é/x'];
const prefixes = ['', '', 'a', 'a/', 'c/', 'é', 'zz'];
const delimiters = ['', '/', 'b', 'd/'];

const megabyte = 1024 * 1024;

/** A body that names the command that wrote it, so an overwrite that did not happen shows. */
function bodyOf(tag: number, size: number): Buffer {
  const text = `<${tag}>`;
  return Buffer.alloc(size, text);
}

function agree(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

async function read(real: Real, key: string, range?: string, versionId?: string): Promise<Buffer> {
  const answer = await real.s3.send(new GetObjectCommand({ Bucket: real.bucket, Key: key, Range: range, VersionId: versionId }));
  return Buffer.from(await answer.Body!.transformToByteArray());
}

class Put implements Command {
  constructor(readonly key: string, readonly tag: number, readonly size: number) {}
  check = () => true;
  async run(model: BucketModel, real: Real) {
    const body = bodyOf(this.tag, this.size);
    const answer = await real.s3.send(new PutObjectCommand({ Bucket: real.bucket, Key: this.key, Body: body }));
    expectVersionId(model, answer.VersionId, 'PUT');
    model.write(this.key, answer.VersionId ?? 'null', body);
  }
  toString = () => `put(${JSON.stringify(this.key)}, ${this.size} bytes #${this.tag})`;
}

function expectVersionId(model: BucketModel, versionId: string | undefined, what: string): void {
  if (model.versioning === 'Enabled') agree(versionId && versionId !== 'null', `${what} on a versioning-enabled bucket answered version id ${versionId}`);
  if (model.versioning === 'Suspended') agree(versionId === 'null' || versionId === undefined, `${what} on a suspended bucket answered version id ${versionId}, not null`);
  if (model.versioning === 'Unversioned') agree(versionId === undefined || versionId === 'null', `${what} on an unversioned bucket answered version id ${versionId}`);
}

class Get implements Command {
  /** Range as fractions of the current size: [start, length]; undefined for the whole object. */
  constructor(readonly key: string, readonly range: [number, number] | undefined) {}
  check = () => true;
  async run(model: BucketModel, real: Real) {
    const expected = model.current(this.key);
    if (expected === undefined) {
      const answer = await errorOf(read(real, this.key));
      agree(answer.name === 'NoSuchKey', `GET of absent ${JSON.stringify(this.key)} answered ${answer.name}`);
      return;
    }
    if (this.range && expected.length > 0) {
      const start = Math.floor(this.range[0] * expected.length);
      const end = Math.min(expected.length - 1, start + Math.floor(this.range[1] * expected.length));
      const got = await read(real, this.key, `bytes=${start}-${end}`);
      agree(got.equals(expected.subarray(start, end + 1)), `GET ${JSON.stringify(this.key)} bytes=${start}-${end} returned ${got.length} bytes that differ from the last write`);
      return;
    }
    const got = await read(real, this.key);
    agree(got.equals(expected), `GET ${JSON.stringify(this.key)} returned ${got.length} bytes ('${got.subarray(0, 12).toString()}'), expected ${expected.length} ('${expected.subarray(0, 12).toString()}')`);
  }
  toString = () => `get(${JSON.stringify(this.key)}${this.range ? `, range ${this.range.map((x) => x.toFixed(2)).join('+')}` : ''})`;
}

class Copy implements Command {
  constructor(readonly from: string, readonly to: string) {}
  check = (model: Readonly<BucketModel>) => this.from !== this.to || model.versioning === 'Enabled';
  async run(model: BucketModel, real: Real) {
    const source = model.current(this.from);
    const send = real.s3.send(new CopyObjectCommand({ Bucket: real.bucket, Key: this.to, CopySource: `${real.bucket}/${this.from.split('/').map(encodeURIComponent).join('/')}`, MetadataDirective: this.from === this.to ? 'REPLACE' : 'COPY' }));
    if (source === undefined) {
      const answer = await errorOf(send);
      agree(answer.name === 'NoSuchKey', `copy from absent ${JSON.stringify(this.from)} answered ${answer.name}`);
      return;
    }
    const answer = await send;
    expectVersionId(model, answer.VersionId, 'CopyObject');
    model.write(this.to, answer.VersionId ?? 'null', source);
  }
  toString = () => `copy(${JSON.stringify(this.from)} -> ${JSON.stringify(this.to)})`;
}

class Delete implements Command {
  constructor(readonly key: string) {}
  check = () => true;
  async run(model: BucketModel, real: Real) {
    const answer = await real.s3.send(new DeleteObjectCommand({ Bucket: real.bucket, Key: this.key }));
    if (model.versioning !== 'Unversioned') agree(answer.DeleteMarker === true, `DELETE of ${JSON.stringify(this.key)} on a ${model.versioning} bucket did not report a delete marker`);
    if (model.versioning === 'Enabled') agree(answer.VersionId && answer.VersionId !== 'null', `a delete marker on an enabled bucket got version id ${answer.VersionId}`);
    model.deleteCurrent(this.key, answer.VersionId ?? 'null');
  }
  toString = () => `delete(${JSON.stringify(this.key)})`;
}

class DeleteVersion implements Command {
  constructor(readonly key: string, readonly pick: number) {}
  check = (model: Readonly<BucketModel>) => model.versioning !== 'Unversioned' && (model.keys.get(this.key)?.length ?? 0) > 0;
  async run(model: BucketModel, real: Real) {
    const versions = model.keys.get(this.key)!;
    const chosen = versions[this.pick % versions.length]!;
    await real.s3.send(new DeleteObjectCommand({ Bucket: real.bucket, Key: this.key, VersionId: chosen.versionId }));
    model.deleteVersion(this.key, chosen.versionId);
    const older = model.keys.get(this.key)?.[0];
    if (older?.body) agree((await read(real, this.key, undefined, older.versionId)).equals(older.body), `the oldest version of ${JSON.stringify(this.key)} changed after another version was deleted`);
  }
  toString = () => `deleteVersion(${JSON.stringify(this.key)}, #${this.pick})`;
}

class Multipart implements Command {
  constructor(readonly key: string, readonly tag: number, readonly parts: number, readonly lastBytes: number) {}
  check = () => true;
  async run(model: BucketModel, real: Real) {
    const { UploadId } = await real.s3.send(new CreateMultipartUploadCommand({ Bucket: real.bucket, Key: this.key }));
    const bodies = Array.from({ length: this.parts }, (_, index) => bodyOf(this.tag + index, index === this.parts - 1 ? this.lastBytes : 5 * megabyte));
    const etags: string[] = [];
    for (const [index, body] of bodies.entries()) etags.push((await real.s3.send(new UploadPartCommand({ Bucket: real.bucket, Key: this.key, UploadId, PartNumber: index + 1, Body: body }))).ETag!);
    agree(model.current(this.key) === undefined ? (await errorOf(read(real, this.key))).name === 'NoSuchKey' : true, `an uploaded part of ${JSON.stringify(this.key)} is visible before completion`);
    const answer = await real.s3.send(new CompleteMultipartUploadCommand({ Bucket: real.bucket, Key: this.key, UploadId, MultipartUpload: { Parts: etags.map((ETag, index) => ({ ETag, PartNumber: index + 1 })) } }));
    expectVersionId(model, answer.VersionId, 'CompleteMultipartUpload');
    model.write(this.key, answer.VersionId ?? 'null', Buffer.concat(bodies));
  }
  toString = () => `multipart(${JSON.stringify(this.key)}, ${this.parts} parts, last ${this.lastBytes} bytes #${this.tag})`;
}

class SetVersioning implements Command {
  constructor(readonly status: 'Enabled' | 'Suspended') {}
  check = () => true;
  async run(model: BucketModel, real: Real) {
    await real.s3.send(new PutBucketVersioningCommand({ Bucket: real.bucket, VersioningConfiguration: { Status: this.status } }));
    model.versioning = this.status;
  }
  toString = () => `versioning(${this.status})`;
}

class List implements Command {
  constructor(readonly prefix: string, readonly delimiter: string, readonly pageSize: number) {}
  check = () => true;
  async run(model: BucketModel, real: Real) {
    const keysSeen: string[] = [];
    const prefixesSeen: string[] = [];
    let token: string | undefined;
    for (let pages = 0; ; pages += 1) {
      agree(pages < 100, 'a listing did not end after 100 pages');
      const page = await real.s3.send(new ListObjectsV2Command({ Bucket: real.bucket, Prefix: this.prefix || undefined, Delimiter: this.delimiter || undefined, MaxKeys: this.pageSize, ContinuationToken: token }));
      agree((page.Contents?.length ?? 0) + (page.CommonPrefixes?.length ?? 0) <= this.pageSize, `a page of max-keys ${this.pageSize} held more entries`);
      keysSeen.push(...(page.Contents ?? []).map((object) => object.Key!));
      prefixesSeen.push(...(page.CommonPrefixes ?? []).map((entry) => entry.Prefix!));
      if (!page.IsTruncated) break;
      token = page.NextContinuationToken;
    }
    const expected = model.listing(this.prefix, this.delimiter);
    agree(JSON.stringify(keysSeen) === JSON.stringify(expected.keys), `listed keys ${JSON.stringify(keysSeen)}, the model has ${JSON.stringify(expected.keys)}`);
    agree(JSON.stringify(prefixesSeen) === JSON.stringify(expected.prefixes), `listed common prefixes ${JSON.stringify(prefixesSeen)}, the model has ${JSON.stringify(expected.prefixes)}`);
  }
  toString = () => `list(prefix ${JSON.stringify(this.prefix)}, delimiter ${JSON.stringify(this.delimiter)}, max-keys ${this.pageSize})`;
}

class ListVersions implements Command {
  check = (model: Readonly<BucketModel>) => model.versioning !== 'Unversioned';
  async run(model: BucketModel, real: Real) {
    const page = await real.s3.send(new ListObjectVersionsCommand({ Bucket: real.bucket }));
    const seen = [...(page.Versions ?? []).map((entry) => [entry.Key!, entry.VersionId ?? 'null', false, entry.IsLatest === true] as const), ...(page.DeleteMarkers ?? []).map((entry) => [entry.Key!, entry.VersionId ?? 'null', true, entry.IsLatest === true] as const)];
    const describe = (entries: readonly (readonly [string, string, boolean, ...unknown[]])[]) => byteOrder(entries.map(([key, id, marker]) => `${key}@${id}${marker ? '(marker)' : ''}`));
    const expected = model.versionListing();
    agree(JSON.stringify(describe(seen)) === JSON.stringify(describe(expected)), `ListObjectVersions shows ${JSON.stringify(describe(seen))}, the model has ${JSON.stringify(describe(expected))}`);
    for (const key of model.keys.keys()) {
      const latest = model.keys.get(key)!.at(-1)!.versionId;
      const flagged = seen.filter((entry) => entry[0] === key && entry[3]).map((entry) => entry[1]);
      agree(flagged.length === 1 && flagged[0] === latest, `IsLatest of ${JSON.stringify(key)} is on ${JSON.stringify(flagged)}, expected ${latest}`);
    }
  }
  toString = () => 'listVersions()';
}

const key = fc.constantFrom(...keys);
const put = fc.tuple(key, fc.nat(9999), fc.constantFrom(0, 1, 7, 1000, 70_000, 300_000)).map(([name, tag, size]) => new Put(name, tag, size));
const list = fc.tuple(fc.constantFrom(...prefixes), fc.constantFrom(...delimiters), fc.constantFrom(1, 2, 3, 1000)).map(([prefix, delimiter, size]) => new List(prefix, delimiter, size));
/** Puts and listings are drawn more often than the rest, so that listings have something to page through. */
const commands = [
  put,
  put,
  put,
  list,
  list,
  fc.tuple(key, fc.option(fc.tuple(fc.double({ min: 0, max: 0.99, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true })), { nil: undefined })).map(([name, range]) => new Get(name, range)),
  fc.tuple(key, key).map(([from, to]) => new Copy(from, to)),
  key.map((name) => new Delete(name)),
  fc.tuple(key, fc.nat(20)).map(([name, pick]) => new DeleteVersion(name, pick)),
  fc.tuple(key, fc.nat(9999), fc.constantFrom(1, 1, 1, 2), fc.constantFrom(0, 1, 5000)).map(([name, tag, parts, last]) => new Multipart(name, tag, parts, last)),
  fc.constant(new ListVersions()),
];
const versioningCommands = [fc.constantFrom<'Enabled' | 'Suspended'>('Enabled', 'Suspended').map((status) => new SetVersioning(status))];

export interface ModelRunOptions {
  seed: number;
  runs: number;
  budgetMs?: number;
  /** A fresh, empty bucket for each sequence; dropped afterwards. */
  bucket: () => Promise<{ s3: S3Client; bucket: string; drop: () => Promise<void> }>;
  /** Commands per sequence at most (default 25). */
  maxCommands?: number;
  /** Draw versioning on and suspended too (default true); without, buckets stay unversioned. */
  versioning?: boolean;
}

/** Runs the model property; resolves with the number of sequences run, or throws naming the seed and the shrunk sequence. */
export async function runS3Model(options: ModelRunOptions): Promise<number> {
  let count = 0;
  const details = await fc.check(
    fc.asyncProperty(fc.commands(options.versioning === false ? commands : [...commands, ...versioningCommands], { maxCommands: options.maxCommands ?? 25, size: 'max' }), async (sequence) => {
      count += 1;
      const real = await options.bucket();
      try {
        await fc.asyncModelRun(() => ({ model: new BucketModel(), real }), sequence);
      } finally {
        await real.drop();
      }
    }),
    { seed: options.seed, numRuns: options.runs, ...(options.budgetMs ? { interruptAfterTimeLimit: options.budgetMs, markInterruptAsFailure: false } : {}) },
  );
  if (details.failed) {
    const error = (details as { errorInstance?: unknown }).errorInstance as Error | undefined;
    throw new CheckFailure(`the target and the model disagree: ${error?.message ?? 'unknown'}\nshrunk sequence: ${String(details.counterexample?.[0] ?? '?')}\nreplay with --seed ${options.seed} (fast-check path ${details.counterexamplePath})`);
  }
  return count;
}

export const modelChecks: Check[] = [
  {
    id: 'model.s3-sequences',
    spec: 'S3 model-based runs',
    source: 'https://docs.aws.amazon.com/AmazonS3/latest/userguide/Welcome.html#ConsistencyModel (strong read-after-write and list consistency)',
    title: 'random sequences of put, overwrite, ranged get, copy, delete, multipart, versioning (when offered) and listings agree with the reference model',
    needs: ['multipart'],
    async run(target: Target) {
      let made = 0;
      await runS3Model({
        versioning: (await target.capabilities()).versioning.present,
        seed: target.options.seed,
        runs: target.options.runs ?? 20,
        ...(target.options.budgetMs ? { budgetMs: target.options.budgetMs } : {}),
        bucket: async () => {
          const bucket = await target.makeBucket(`model-${(made += 1)}`);
          return { s3: target.s3, bucket, drop: () => target.dropBucket(bucket) };
        },
      });
    },
  },
];
