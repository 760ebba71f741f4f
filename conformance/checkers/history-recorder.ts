/**
 * Records what concurrent S3 clients observe, for the linearizability checker
 * (linearizability.ts): each client runs a seeded mix of PUT (plain, If-None-Match: *, If-Match
 * on a value it saw), GET, HEAD, DELETE, GET of a version it was told of, and listings, on a
 * few shared keys, and every operation is kept with its invocation and answer times. Each PUT
 * writes a distinct body, so a body's MD5 names the write that produced it.
 *
 * Answers are classified as the checker reads them: 404 is `absent`, 412 `precondition`, any
 * other named refusal (4xx, or a 503 such as ErasureWriteQuorum whose contract is that nothing
 * was committed) `noEffect`, and a lost connection, a timeout or a 500 an unknown outcome.
 */
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Prng } from '../../src/util/prng.js';
import type { HistoryOperation, KeyInput, KeyOutput, ListingOperation } from './linearizability.js';

export interface WorkloadOptions {
  /** One client per entry; several entries may point at different nodes of one deployment. */
  clients: S3Client[];
  bucket: string;
  versioned: boolean;
  /** Keys shared by all clients (a few, so that operations collide). */
  keys: string[];
  /** Listings use this prefix; every key should start with it. */
  prefix: string;
  operationsPerClient: number;
  prng: Prng;
  /** Stop issuing operations after this long (every load loop is bounded in count and time). */
  maxDurationMs: number;
  /** Awaited before each operation starts, with the number of operations started before it (across clients): faults at points of the workload's progress. */
  beforeOperation?: (started: number) => Promise<void>;
}

export interface RecordedRun {
  history: HistoryOperation[];
  listings: ListingOperation[];
}

export const valueOf = (body: Uint8Array | string): string => createHash('md5').update(body).digest('hex');

/** Numbers every body this process writes, so that no two PUTs carry the same body (a run records several workloads). */
let bodies = 0;
export const nextBodyNumber = (): number => (bodies += 1);

/** Runs the workload and returns what every client saw. */
export async function recordWorkload(options: WorkloadOptions): Promise<RecordedRun> {
  const history: HistoryOperation[] = [];
  const listings: ListingOperation[] = [];
  const seenValues: string[] = [];
  const seenVersions: string[] = [];
  const deadline = performance.now() + options.maxDurationMs;
  let started = 0;
  const client = async (index: number): Promise<void> => {
    const s3 = options.clients[index % options.clients.length]!;
    for (let n = 0; n < options.operationsPerClient && performance.now() < deadline; n += 1) {
      await options.beforeOperation?.((started += 1) - 1);
      const key = options.keys[options.prng.int(options.keys.length)]!;
      const roll = options.prng.int(100);
      if (roll < 8) {
        const invokeMs = performance.now();
        try {
          const keys = await listAll(s3, options.bucket, options.prefix);
          listings.push({ client: index, prefix: options.prefix, keys, invokeMs, completeMs: performance.now() });
        } catch {
          // A refused listing says nothing about the keys.
        }
        continue;
      }
      const input = chooseInput(roll, options, seenValues, seenVersions, () => `${index}:${nextBodyNumber()}:${options.prng.seed}`);
      const operation = await recordOperation(s3, index, options.bucket, key, input);
      history.push(operation);
      const { output } = operation;
      if (output?.kind === 'ok' && output.value !== undefined) seenValues.push(output.value);
      if (output?.kind === 'ok' && output.versionId !== undefined && input.op === 'put') seenVersions.push(output.versionId);
    }
  };
  await Promise.all(Array.from({ length: options.clients.length }, (_, index) => client(index)));
  return { history, listings };
}

function chooseInput(roll: number, options: WorkloadOptions, seenValues: string[], seenVersions: string[], nextBody: () => string): KeyInput & { body?: string } {
  const pick = (list: string[]): string | undefined => (list.length === 0 ? undefined : list[options.prng.int(list.length)]);
  if (roll < 40) {
    const body = `body ${nextBody()}`;
    const value = valueOf(body);
    const condition = options.prng.int(4);
    const ifMatch = condition === 1 ? pick(seenValues) : undefined;
    if (condition === 0) return { op: 'put', value, ifNoneMatch: '*', body };
    return ifMatch === undefined ? { op: 'put', value, body } : { op: 'put', value, ifMatch, body };
  }
  if (roll < 68) return { op: 'get' };
  if (roll < 80) return { op: 'head' };
  if (roll < 92 || !options.versioned) return { op: 'delete' };
  const versionId = pick(seenVersions);
  return versionId === undefined ? { op: 'get' } : { op: 'getVersion', versionId };
}

/** Performs one operation through `s3` (the client numbered `client` in the history) and records what it saw. */
export async function recordOperation(s3: S3Client, client: number, bucket: string, key: string, input: KeyInput & { body?: string }): Promise<HistoryOperation> {
  const invokeMs = performance.now();
  const { output, completed } = await perform(s3, bucket, key, input);
  return { key, client, input, output, invokeMs, completeMs: completed ? performance.now() : undefined };
}

async function perform(s3: S3Client, bucket: string, key: string, input: KeyInput & { body?: string }): Promise<{ output: KeyOutput | undefined; completed: boolean }> {
  try {
    switch (input.op) {
      case 'put': {
        const answer = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: input.body, IfNoneMatch: input.ifNoneMatch, IfMatch: input.ifMatch === undefined ? undefined : `"${input.ifMatch}"` }));
        return done({ kind: 'ok', versionId: answer.VersionId });
      }
      case 'get':
      case 'getVersion': {
        const answer = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: input.op === 'getVersion' ? input.versionId : undefined }));
        const bytes = await answer.Body!.transformToByteArray();
        return done({ kind: 'ok', value: valueOf(bytes), versionId: answer.VersionId });
      }
      case 'head': {
        const answer = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return done({ kind: 'ok', value: answer.ETag?.replace(/"/g, ''), versionId: answer.VersionId });
      }
      case 'delete':
      case 'deleteVersion': {
        const answer = await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key, VersionId: input.op === 'deleteVersion' ? input.versionId : undefined }));
        return done({ kind: 'ok', versionId: answer.VersionId });
      }
    }
  } catch (error) {
    return classify(error);
  }
}

const done = (output: KeyOutput): { output: KeyOutput; completed: boolean } => ({ output, completed: true });

/** Reads an SDK error as the checker's answer kinds. */
export function classify(error: unknown): { output: KeyOutput | undefined; completed: boolean } {
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  const name = (error as { name?: string }).name ?? 'Error';
  if (status === undefined || status === 500) return { output: undefined, completed: false };
  if (status === 404) return done({ kind: 'absent' });
  if (status === 412) return done({ kind: 'precondition' });
  if ((status >= 400 && status < 500) || status === 503) return done({ kind: 'noEffect', name });
  return { output: undefined, completed: false };
}

export async function listAll(s3: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const entry of page.Contents ?? []) keys.push(entry.Key!);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
  return keys;
}
