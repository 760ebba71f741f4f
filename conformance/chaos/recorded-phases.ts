/**
 * What the scenarios judged by the linearizability checker share (partition.ts, clock-skew.ts,
 * drive-faults.ts, partition-moves.ts): a bucket (versioned or not, drawn from the seed unless the
 * scenario says), the recorded workload of concurrent clients (history-recorder.ts, one client per
 * node, or a scenario's own recorder such as the multipart one of partition-multipart.ts) in
 * phases, each started by its own step (a fault applied, links healed) and optionally changing
 * things before operations it counts; then every client reads every key once more, and the whole
 * history is checked (a register per key; a versioned register in a versioned bucket), listings
 * are checked for acknowledged keys, and a closing heal must fail on nothing and leave every
 * object at full redundancy. A scenario may add checks of its own before and after that heal.
 *
 * `RecordedSidecar` records the same kind of history beside the PUT traffic of the older
 * scenarios (rolling-restart, kill-node-mid-decommission, kill-drives-mid-rebalance): a burst of
 * one operation per client with each batch, judged the same way at the end.
 */
import { CreateBucketCommand, GetObjectCommand, PutBucketVersioningCommand, type S3Client } from '@aws-sdk/client-s3';
import { checkHistory, checkListings, describeViolation, registerModel, versionedRegisterModel, type HistoryOperation, type ListingOperation } from '../checkers/linearizability.js';
import { classify, nextBodyNumber, recordOperation, recordWorkload, valueOf, type RecordedRun, type WorkloadOptions } from '../checkers/history-recorder.js';
import { s3ClientFor, type SvcProcess } from '../harness/server-process.js';
import { createPrng, type Prng } from '../../src/util/prng.js';
import { bucket, healAndCheckRedundancy, targetFor, volume, type ChaosContext } from './steps.js';

/** A scenario's result as the chaos runner reports it. */
export interface RecordedResult {
  problems: string[];
  timeline: string[];
  acknowledged: number;
  refused: number;
  refusals: Record<string, number>;
}

export interface Phase {
  name: string;
  /** Runs before the phase's first operation; its answer goes in the timeline. */
  before?: () => Promise<string>;
  /** Operations of the scenario's own, run after `before` and before the clients' workload, and judged with it. */
  probe?: (clients: S3Client[]) => Promise<HistoryOperation[]>;
  /** Awaited before each operation of the phase, with the operations started before it; an answer goes in the timeline. */
  beforeOperation?: (started: number) => Promise<string | undefined>;
}

export const recordedKeys = ['p/a', 'p/b', 'p/c'];
export const recordedPrefix = 'p/';
const keys = recordedKeys;

/** What runs the clients' operations of a phase, and their closing reads. */
export interface Recorder {
  record(options: WorkloadOptions): Promise<RecordedRun>;
  /** Every client reads every key once more, after everything else. */
  finalReads(clients: S3Client[], history: HistoryOperation[]): Promise<void>;
}

/** The default: history-recorder.ts's mix of plain and conditional PUTs, GETs, HEADs, DELETEs and listings. */
export const registerRecorder: Recorder = { record: recordWorkload, finalReads: recordFinalReads };

export interface RecordedOptions {
  /** The bucket's kind, drawn from the seed when not given. */
  versioned?: boolean;
  /** The scenario made the bucket (with `versioned` as its kind) already. */
  bucketReady?: boolean;
  recorder?: Recorder;
  /** Checks of the scenario's own after the history is judged, before the closing heal. */
  beforeHeal?: () => Promise<string[]>;
  /** Checks of the scenario's own after the closing heal. */
  afterHeal?: () => Promise<string[]>;
}

export async function runRecordedPhases(context: ChaosContext, servers: SvcProcess[], names: string[], phases: Phase[], options: RecordedOptions = {}): Promise<RecordedResult> {
  const drawn = context.prng.int(2) === 1;
  const versioned = options.versioned ?? drawn;
  const recorder = options.recorder ?? registerRecorder;
  const clients = servers.map((server) => s3ClientFor(server.url));
  if (!options.bucketReady) {
    await clients[0]!.send(new CreateBucketCommand({ Bucket: bucket }));
    if (versioned) await clients[0]!.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
  }
  context.note(`${servers.length} nodes up; ${versioned ? 'versioned' : 'unversioned'} bucket`);
  const perClient = 6 * volume(context.size);
  const history: HistoryOperation[] = [];
  const listings: ListingOperation[] = [];
  for (const phase of phases) {
    if (phase.before) context.note(await phase.before());
    if (phase.probe) {
      const probed = await phase.probe(clients);
      history.push(...probed);
      context.note(`${phase.name}: ${probed.length} operations in turn: ${probed.map(describeOperation).join(', ')}`);
    }
    const hook = phase.beforeOperation;
    const recorded = await recorder.record({
      clients, bucket, versioned, keys, prefix: recordedPrefix, operationsPerClient: perClient, prng: context.prng, maxDurationMs: 15_000 * context.size,
      ...(hook ? { beforeOperation: async (count: number) => {
        const event = await hook(count);
        if (event) context.note(event);
      } } : {}),
    });
    history.push(...recorded.history);
    listings.push(...recorded.listings);
    const answered = recorded.history.filter((op) => op.output !== undefined).length;
    context.note(`${phase.name}: ${recorded.history.length} operations, ${answered} answered, ${recorded.history.length - answered} with unknown outcome; ${latencyOf(recorded.history)}`);
  }
  await recorder.finalReads(clients, history);
  const problems = judgeHistory(context, history, listings, versioned);
  if (options.beforeHeal) problems.push(...(await options.beforeHeal()));
  problems.push(...(await healAndCheckRedundancy(targetFor(servers[0]!.url, context.seed), context)));
  if (options.afterHeal) problems.push(...(await options.afterHeal()));
  if (problems.length > 0) {
    // What the nodes warned of, for the report.
    servers.forEach((server, index) => {
      const warnings = server.logs().split('\n').filter((line) => /"level":(40|50|60)/.test(line)).slice(-8);
      for (const line of warnings) context.note(`${names[index]} logged: ${line.slice(0, 400)}`);
    });
  }
  return { problems, timeline: context.timeline, ...tallyOf(history) };
}

/**
 * Every recorded key written through each of `writers` in turn, each write answered before the
 * next starts, then read through each of `readers`: a probe whose last write every read must
 * return, recorded for the checker. `tag` keeps the bodies apart from other runs'.
 */
export async function writesInTurn(clients: S3Client[], writers: number[], readers: number[], tag: string): Promise<HistoryOperation[]> {
  const history: HistoryOperation[] = [];
  for (const key of keys) {
    for (const node of writers) {
      const body = `in turn ${node}:${nextBodyNumber()}:${tag}`;
      history.push(await recordOperation(clients[node]!, node, bucket, key, { op: 'put', value: valueOf(body), body }));
    }
    for (const node of readers) history.push(await recordOperation(clients[node]!, node, bucket, key, { op: 'get' }));
  }
  return history;
}

/** The writes of a history as the chaos runner counts them. */
export function tallyOf(history: HistoryOperation[]): { acknowledged: number; refused: number; refusals: Record<string, number> } {
  const writes = history.filter((op) => op.input.op === 'put' || op.input.op === 'delete');
  const refusals: Record<string, number> = {};
  for (const op of writes) if (op.output?.kind === 'noEffect') refusals[op.output.name] = (refusals[op.output.name] ?? 0) + 1;
  return {
    acknowledged: writes.filter((op) => op.output?.kind === 'ok').length,
    refused: writes.filter((op) => op.output !== undefined && op.output.kind !== 'ok').length,
    refusals,
  };
}

/** The history against the register model of the bucket's kind, and the listings against it: the problems found. */
export function judgeHistory(context: ChaosContext, history: HistoryOperation[], listings: ListingOperation[], versioned: boolean): string[] {
  const problems: string[] = [];
  const result = versioned ? checkHistory(versionedRegisterModel, history) : checkHistory(registerModel, history);
  for (const violation of result.violations) problems.push(describeViolation(violation));
  for (const unknown of result.unknown) context.note(`key ${unknown.key}: the checker gave up (${unknown.reason})`);
  for (const listing of checkListings(history, listings)) problems.push(`listing by client ${listing.listing.client} ${listing.problem}: ${listing.key}`);
  const keyCount = new Set(history.map((op) => op.key)).size;
  context.note(`checked ${history.length} operations on ${keyCount} keys and ${listings.length} listings: ${result.violations.length} non-linearizable key(s)`);
  return problems;
}

/**
 * Recorded operations beside a scenario's PUT traffic: each `burst` runs one operation per client
 * (the clients of the nodes up at that moment) on the shared keys of an unversioned bucket;
 * `judge` reads every key through every client once more and checks the whole history. Its own
 * generator (from the seed), so the scenario's draws and fault points stay as they were.
 */
export class RecordedSidecar {
  readonly history: HistoryOperation[] = [];
  readonly listings: ListingOperation[] = [];
  private readonly prng: Prng;

  constructor(private readonly context: ChaosContext, private readonly clients: () => S3Client[]) {
    this.prng = createPrng((context.seed ^ 0x5eedcafe) >>> 0);
  }

  async burst(): Promise<void> {
    const clients = this.clients();
    if (clients.length === 0) return;
    const recorded = await recordWorkload({ clients, bucket, versioned: false, keys, prefix: recordedPrefix, operationsPerClient: 1, prng: this.prng, maxDurationMs: 60_000 });
    this.history.push(...recorded.history);
    this.listings.push(...recorded.listings);
  }

  async judge(): Promise<string[]> {
    await recordFinalReads(this.clients(), this.history);
    const answered = this.history.filter((op) => op.output !== undefined).length;
    this.context.note(`recorded beside the traffic: ${this.history.length} operations, ${answered} answered; ${latencyOf(this.history)}`);
    return judgeHistory(this.context, this.history, this.listings, false);
  }
}

/** One recorded operation in brief: `put p/a via 2 ok`. */
function describeOperation(op: HistoryOperation): string {
  const answer = op.output === undefined ? 'unknown' : op.output.kind === 'ok' && op.input.op === 'get' ? `ok ${op.output.value?.slice(0, 6)}` : op.output.kind;
  const value = op.input.op === 'put' ? ` ${op.input.value.slice(0, 6)}` : '';
  return `${op.input.op}${value} ${op.key} via ${op.client + 1} ${answer}`;
}

/** The GETs' latency in a phase: median, p99 and the slowest, of those answered. */
function latencyOf(history: HistoryOperation[]): string {
  const times = history.filter((op) => op.input.op === 'get' && op.completeMs !== undefined).map((op) => op.completeMs! - op.invokeMs).sort((a, b) => a - b);
  if (times.length === 0) return 'no GET answered';
  const at = (fraction: number): string => times[Math.min(times.length - 1, Math.ceil(fraction * times.length) - 1)]!.toFixed(0);
  return `GET ms: median ${at(0.5)}, p99 ${at(0.99)}, slowest ${times.at(-1)!.toFixed(0)} (${times.length} GETs)`;
}

async function recordFinalReads(clients: S3Client[], history: HistoryOperation[]): Promise<void> {
  await Promise.all(clients.map(async (s3, client) => {
    for (const key of keys) {
      const invokeMs = performance.now();
      try {
        const answer = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        const bytes = await answer.Body!.transformToByteArray();
        history.push({ key, client, input: { op: 'get' }, output: { kind: 'ok', value: valueOf(bytes), ...(answer.VersionId ? { versionId: answer.VersionId } : {}) }, invokeMs, completeMs: performance.now() });
      } catch (error) {
        const { output, completed } = classify(error);
        history.push({ key, client, input: { op: 'get' }, output, invokeMs, completeMs: completed ? performance.now() : undefined });
      }
    }
  }));
}
