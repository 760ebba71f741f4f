/**
 * The recorded workload of `partition-multipart` (partition.ts): concurrent clients, one per
 * node, run multipart uploads on a few shared keys: Create through the client's own node, each
 * part through another node, Complete through a node drawn from the seed; besides them plain
 * PUTs, GETs, HEADs, DELETEs and listings. Some uploads are left open on purpose.
 *
 * For the linearizability checker a Complete is the write (its invocation and answer times are
 * the Complete's): its value is the ETag the completed object must have (the MD5 of the chosen
 * parts' MD5s and their count, as S3 computes it), known before it is sent, so a refused Complete
 * whose object becomes readable is a read of a value no acknowledged write gave. A plain PUT's
 * value is its body's MD5, its ETag. Reads record the ETag they were answered with; the body of
 * every GET must be the one its ETag names (torn or foreign bytes are a problem of their own).
 *
 * Every upload's fate is kept: completed or aborted with an answer, left open on purpose, or
 * unknown (an answer lost). After the closing heal every node must list the same open uploads,
 * among them every upload left open on purpose, and none completed or aborted; and the drives
 * must hold the directories of those open uploads only.
 */
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { classify, listAll, nextBodyNumber, valueOf, type RecordedRun, type WorkloadOptions } from '../checkers/history-recorder.js';
import type { HistoryOperation, KeyInput, KeyOutput, ListingOperation } from '../checkers/linearizability.js';
import { MiB } from '../../src/util/limits.js';
import type { Recorder } from './recorded-phases.js';
import { bucket } from './steps.js';

type Fate = 'left open' | 'completed' | 'aborted' | 'unknown' | 'refused';

interface Upload {
  key: string;
  uploadId: string;
  fate: Fate;
}

interface Part {
  PartNumber: number;
  ETag: string;
  body: Buffer;
}

/** S3's ETag of a completed upload: the MD5 of the parts' binary MD5s, a dash, their count. */
export function multipartEtag(partEtags: string[]): string {
  const digest = createHash('md5').update(Buffer.concat(partEtags.map((etag) => Buffer.from(etag.replace(/"/g, ''), 'hex')))).digest('hex');
  return `${digest}-${partEtags.length}`;
}

const unquote = (etag: string | undefined): string | undefined => etag?.replace(/"/g, '');

export class MultipartRecorder implements Recorder {
  readonly uploads: Upload[] = [];
  /** Problems seen while recording (a body that is not the one its ETag names, an ETag that is not S3's). */
  readonly problems: string[] = [];
  /** The MD5 of the body each written ETag stands for. */
  private readonly bodies = new Map<string, string>();
  counts = { uploads: 0, completed: 0, refused: 0, unknown: 0, leftOpen: 0, abandoned: 0 };
  /** The upload ids node 1 listed after the closing heal (checkUploadListings). */
  private listedIds = new Set<string>();

  async record(options: WorkloadOptions): Promise<RecordedRun> {
    const history: HistoryOperation[] = [];
    const listings: ListingOperation[] = [];
    const deadline = performance.now() + options.maxDurationMs;
    let started = 0;
    const client = async (index: number): Promise<void> => {
      for (let n = 0; n < options.operationsPerClient && performance.now() < deadline; n += 1) {
        await options.beforeOperation?.((started += 1) - 1);
        const key = options.keys[options.prng.int(options.keys.length)]!;
        const roll = options.prng.int(100);
        const s3 = options.clients[index]!;
        if (roll < 8) {
          const invokeMs = performance.now();
          try {
            listings.push({ client: index, prefix: options.prefix, keys: await listAll(s3, options.bucket, options.prefix), invokeMs, completeMs: performance.now() });
          } catch {
            // A refused listing says nothing about the keys.
          }
        } else if (roll < 50) {
          await this.upload(options, index, key, history, false);
        } else if (roll < 55) {
          await this.upload(options, index, key, history, true);
        } else if (roll < 63) {
          await this.put(options, index, key, history);
        } else if (roll < 83) {
          history.push(await this.get(s3, options.bucket, key, index));
        } else if (roll < 92) {
          history.push(await this.timed(key, index, { op: 'head' }, async () => {
            const answer = await s3.send(new HeadObjectCommand({ Bucket: options.bucket, Key: key }));
            return { kind: 'ok', value: unquote(answer.ETag), versionId: answer.VersionId };
          }));
        } else {
          history.push(await this.timed(key, index, { op: 'delete' }, async () => {
            const answer = await s3.send(new DeleteObjectCommand({ Bucket: options.bucket, Key: key }));
            return { kind: 'ok', versionId: answer.VersionId };
          }));
        }
      }
    };
    await Promise.all(options.clients.map((_, index) => client(index)));
    return { history, listings };
  }

  async finalReads(clients: S3Client[], history: HistoryOperation[]): Promise<void> {
    const keys = [...new Set(history.map((op) => op.key))].sort();
    await Promise.all(clients.map(async (s3, index) => {
      for (const key of keys) history.push(await this.get(s3, bucket, key, index));
    }));
  }

  /**
   * Every node lists the same open uploads: each left open on purpose, none completed or aborted
   * (an upload that ended while a node was cut off keeps its directory on that node's drives: a
   * listing must not count such a minority of copies).
   */
  async checkUploadListings(clients: S3Client[], bucket: string, prefix: string): Promise<string[]> {
    const problems: string[] = [];
    const lists: string[][] = [];
    for (const [index, s3] of clients.entries()) {
      try {
        lists.push(await listUploads(s3, bucket, prefix));
      } catch (error) {
        problems.push(`node ${index + 1}: ListMultipartUploads failed with ${(error as Error).name}`);
        lists.push([]);
      }
    }
    const first = lists[0]!;
    lists.forEach((list, index) => {
      if (index > 0 && JSON.stringify(list) !== JSON.stringify(first)) {
        const missing = first.filter((id) => !list.includes(id));
        const extra = list.filter((id) => !first.includes(id));
        problems.push(`node ${index + 1} lists other uploads than node 1 (missing ${missing.join(', ') || 'none'}; more ${extra.join(', ') || 'none'})`);
      }
    });
    const listed = new Set(first);
    this.listedIds = new Set(first.map((entry) => entry.split(' ').at(-1)!));
    for (const upload of this.uploads) {
      const shown = listed.has(`${upload.key} ${upload.uploadId}`);
      if (upload.fate === 'left open' && !shown) problems.push(`upload ${upload.uploadId} of ${upload.key}, created and left open, is not listed`);
      if ((upload.fate === 'completed' || upload.fate === 'aborted') && shown) problems.push(`upload ${upload.uploadId} of ${upload.key} is listed although it was ${upload.fate}`);
    }
    return problems;
  }

  /**
   * What the drives themselves hold after the closing heal (run after checkUploadListings): the
   * directory of every upload under `.svc.sys/multipart/<bucket>/` on every drive must be one of
   * an upload the nodes list as open. A directory of an upload completed or aborted while its
   * drive was cut off is left behind there unless the heal removes it. `note` gets the count.
   */
  async checkUploadDirs(drives: string[], bucket: string, note: (event: string) => void): Promise<string[]> {
    const problems: string[] = [];
    const fates = new Map(this.uploads.map((upload) => [upload.uploadId, upload]));
    let found = 0;
    for (const drive of drives) {
      const base = join(drive, '.svc.sys', 'multipart', bucket);
      for (const hash of await readdir(base).catch(() => [] as string[])) {
        for (const id of await readdir(join(base, hash)).catch(() => [] as string[])) {
          found += 1;
          if (this.listedIds.has(id)) continue;
          const upload = fates.get(id);
          problems.push(`upload ${id}${upload ? ` of ${upload.key} (${upload.fate})` : ''} is not open, yet its directory is left on ${drive}`);
        }
      }
    }
    note(`upload directories on the drives after the heal: ${found}, of ${this.listedIds.size} open upload(s); ${problems.length} left behind`);
    return problems;
  }

  /** Create, parts through other nodes, then (unless left open) Complete as the recorded write. */
  private async upload(options: WorkloadOptions, index: number, key: string, history: HistoryOperation[], leaveOpen: boolean): Promise<void> {
    const clients = options.clients;
    const via = (offset: number): S3Client => clients[(index + offset) % clients.length]!;
    let uploadId: string;
    try {
      uploadId = (await via(0).send(new CreateMultipartUploadCommand({ Bucket: options.bucket, Key: key }))).UploadId!;
    } catch {
      return; // a refused or lost Create leaves nothing a client can see
    }
    const upload: Upload = { key, uploadId, fate: leaveOpen ? 'left open' : 'unknown' };
    this.uploads.push(upload);
    this.counts.uploads += 1;
    // One in four: a 5 MiB part and a tail, both in the object; otherwise one to three small
    // parts, one of which makes the object (every part but the last must be 5 MiB).
    const whole = options.prng.int(4) === 0;
    const sizes = whole ? [5 * MiB, 1_000 + options.prng.int(200_000)] : Array.from({ length: 1 + options.prng.int(3) }, () => 100 + options.prng.int(300_000));
    const tag = nextBodyNumber();
    const parts: Part[] = [];
    for (const [number, size] of sizes.entries()) {
      const body = Buffer.alloc(size, 97 + ((tag + number) % 26));
      body.write(`${key}#${tag}#${number + 1}#${options.prng.seed}#`);
      try {
        const answer = await via(1 + number).send(new UploadPartCommand({ Bucket: options.bucket, Key: key, UploadId: uploadId, PartNumber: number + 1, Body: body }));
        parts.push({ PartNumber: number + 1, ETag: unquote(answer.ETag)!, body });
      } catch {
        break;
      }
    }
    if (leaveOpen) {
      this.counts.leftOpen += 1;
      return;
    }
    if (parts.length < sizes.length) {
      this.counts.abandoned += 1;
      await this.abort(via(2), options.bucket, upload);
      return;
    }
    const chosen = whole ? parts : [parts[options.prng.int(parts.length)]!];
    const value = multipartEtag(chosen.map((part) => part.ETag));
    this.bodies.set(value, valueOf(Buffer.concat(chosen.map((part) => part.body))));
    const completer = clients[options.prng.int(clients.length)]!;
    const operation = await this.timed(key, index, { op: 'put', value }, async () => {
      const answer = await completer.send(new CompleteMultipartUploadCommand({ Bucket: options.bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: chosen.map(({ PartNumber, ETag }) => ({ PartNumber, ETag })) } }));
      if (unquote(answer.ETag) !== value) this.problems.push(`Complete of ${key} (upload ${uploadId}) answered ETag ${unquote(answer.ETag)}, not S3's ${value}`);
      return { kind: 'ok', versionId: answer.VersionId };
    }, { 404: 'NoSuchUpload' });
    history.push(operation);
    if (operation.output?.kind === 'ok') {
      upload.fate = 'completed';
      this.counts.completed += 1;
    } else if (operation.output === undefined) {
      this.counts.unknown += 1;
    } else {
      this.counts.refused += 1;
      upload.fate = 'refused';
      await this.abort(via(2), options.bucket, upload);
    }
  }

  private async abort(s3: S3Client, bucket: string, upload: Upload): Promise<void> {
    try {
      await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: upload.key, UploadId: upload.uploadId }));
      upload.fate = 'aborted';
    } catch {
      upload.fate = 'unknown';
    }
  }

  private async put(options: WorkloadOptions, index: number, key: string, history: HistoryOperation[]): Promise<void> {
    const body = `body ${index}:${nextBodyNumber()}:${options.prng.seed}`;
    const value = valueOf(body);
    this.bodies.set(value, value);
    history.push(await this.timed(key, index, { op: 'put', value }, async () => {
      const answer = await options.clients[index]!.send(new PutObjectCommand({ Bucket: options.bucket, Key: key, Body: body }));
      return { kind: 'ok', versionId: answer.VersionId };
    }));
  }

  /** A GET recorded by the ETag it answered; its body must be the one that ETag names. */
  private async get(s3: S3Client, bucket: string, key: string, index: number): Promise<HistoryOperation> {
    return this.timed(key, index, { op: 'get' }, async () => {
      const answer = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      const bytes = await answer.Body!.transformToByteArray();
      const etag = unquote(answer.ETag);
      const expected = etag === undefined ? undefined : this.bodies.get(etag);
      if (expected !== undefined && expected !== valueOf(bytes)) this.problems.push(`GET ${key} through node ${index + 1}: the body (${bytes.length} bytes) is not the one its ETag ${etag} names (torn or foreign bytes)`);
      return { kind: 'ok', value: etag, versionId: answer.VersionId };
    });
  }

  /** Runs one operation and records it; `named` reads an HTTP status as a refusal of that name. */
  private async timed(key: string, client: number, input: KeyInput, send: () => Promise<KeyOutput>, named: Record<number, string> = {}): Promise<HistoryOperation> {
    const invokeMs = performance.now();
    try {
      const output = await send();
      return { key, client, input, output, invokeMs, completeMs: performance.now() };
    } catch (error) {
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      const name = status === undefined ? undefined : named[status];
      if (name !== undefined) return { key, client, input, output: { kind: 'noEffect', name }, invokeMs, completeMs: performance.now() };
      const { output, completed } = classify(error);
      return { key, client, input, output, invokeMs, completeMs: completed ? performance.now() : undefined };
    }
  }
}

/** Every open upload under the prefix, as `<key> <upload id>`, in the server's order. */
async function listUploads(s3: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const uploads: string[] = [];
  let keyMarker: string | undefined;
  let uploadIdMarker: string | undefined;
  for (;;) {
    const page = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }));
    for (const upload of page.Uploads ?? []) uploads.push(`${upload.Key} ${upload.UploadId}`);
    if (!page.IsTruncated) return uploads;
    keyMarker = page.NextKeyMarker;
    uploadIdMarker = page.NextUploadIdMarker;
  }
}
