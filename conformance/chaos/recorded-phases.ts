/**
 * What the scenarios judged by the linearizability checker share (partition.ts, clock-skew.ts):
 * a bucket (versioned or not, drawn from the seed unless the scenario says), the recorded workload of concurrent clients
 * (history-recorder.ts, one client per node) in phases, each started by its own step (a fault
 * applied, links healed) and optionally changing things before operations it counts; then every
 * client reads every key once more, and the whole history is checked (a register per key; a
 * versioned register in a versioned bucket), listings are checked for acknowledged keys, and a
 * closing heal must fail on nothing and leave every object at full redundancy.
 */
import { CreateBucketCommand, GetObjectCommand, PutBucketVersioningCommand, type S3Client } from '@aws-sdk/client-s3';
import { checkHistory, checkListings, describeViolation, registerModel, versionedRegisterModel, type HistoryOperation, type ListingOperation } from '../checkers/linearizability.js';
import { classify, recordWorkload, valueOf } from '../checkers/history-recorder.js';
import { s3ClientFor, type SvcProcess } from '../harness/server-process.js';
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
  /** Awaited before each operation of the phase, with the operations started before it; an answer goes in the timeline. */
  beforeOperation?: (started: number) => Promise<string | undefined>;
}

const keys = ['p/a', 'p/b', 'p/c'];

/** `versioned`: the bucket's kind, drawn from the seed when not given. */
export async function runRecordedPhases(context: ChaosContext, servers: SvcProcess[], names: string[], phases: Phase[], options: { versioned?: boolean } = {}): Promise<RecordedResult> {
  const drawn = context.prng.int(2) === 1;
  const versioned = options.versioned ?? drawn;
  const clients = servers.map((server) => s3ClientFor(server.url));
  await clients[0]!.send(new CreateBucketCommand({ Bucket: bucket }));
  if (versioned) await clients[0]!.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
  context.note(`${servers.length} nodes up; ${versioned ? 'versioned' : 'unversioned'} bucket`);
  const perClient = 6 * volume(context.size);
  const history: HistoryOperation[] = [];
  const listings: ListingOperation[] = [];
  for (const phase of phases) {
    if (phase.before) context.note(await phase.before());
    const hook = phase.beforeOperation;
    const recorded = await recordWorkload({
      clients, bucket, versioned, keys, prefix: 'p/', operationsPerClient: perClient, prng: context.prng, maxDurationMs: 15_000 * context.size,
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
  // Every client reads every key once more, after everything else.
  await recordFinalReads(clients, history);
  const problems: string[] = [];
  const result = versioned ? checkHistory(versionedRegisterModel, history) : checkHistory(registerModel, history);
  for (const violation of result.violations) problems.push(describeViolation(violation));
  for (const unknown of result.unknown) context.note(`key ${unknown.key}: the checker gave up (${unknown.reason})`);
  for (const listing of checkListings(history, listings)) problems.push(`listing by client ${listing.listing.client} ${listing.problem}: ${listing.key}`);
  context.note(`checked ${history.length} operations on ${keys.length} keys and ${listings.length} listings: ${result.violations.length} non-linearizable key(s)`);
  problems.push(...(await healAndCheckRedundancy(targetFor(servers[0]!.url, context.seed), context)));
  if (problems.length > 0) {
    // What the nodes warned of, for the report.
    servers.forEach((server, index) => {
      const warnings = server.logs().split('\n').filter((line) => /"level":(40|50|60)/.test(line)).slice(-8);
      for (const line of warnings) context.note(`${names[index]} logged: ${line.slice(0, 400)}`);
    });
  }
  const writes = history.filter((op) => op.input.op === 'put' || op.input.op === 'delete');
  const refusals: Record<string, number> = {};
  for (const op of writes) if (op.output?.kind === 'noEffect') refusals[op.output.name] = (refusals[op.output.name] ?? 0) + 1;
  return {
    problems,
    timeline: context.timeline,
    acknowledged: writes.filter((op) => op.output?.kind === 'ok').length,
    refused: writes.filter((op) => op.output !== undefined && op.output.kind !== 'ok').length,
    refusals,
  };
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
