/**
 * The peer protocol: every control call one node makes to another (admin forwarding to the
 * leader, change notices, heal sequences owned by another node, metrics), as one table of
 * operations, each with a decoder of its request and of its answer. The types are derived from
 * the decoders, so the wire format and the types cannot drift:
 *
 *   - `PeerRequest<Op>` / `PeerAnswer<Op>`: what an operation takes and answers;
 *   - `PeerCall`: the discriminated union of every operation with its request;
 *   - `PeerHandlerTable`: one handler per operation; a table that misses one does not compile.
 *
 * On the wire a call is `POST /svc/rpc/v1/peer/<op>` with the request as JSON, answered with the
 * answer as JSON or `{ code, message, details }` (api/rpc/peer-rpc-plugin.ts). Requests are decoded
 * strictly: an unknown operation is UnknownPeerOperation, a missing, mistyped or unknown field is
 * MalformedPeerMessage, never a guess. Answers are checked for the fields the caller reads (status
 * records carry more, passed on as they are); a malformed one is MalformedPeerMessage too.
 *
 * The drive and lock calls travel on the framed stream (src/transport/), each kind with its own
 * typed union and strict codec: the drive operations by name (transport/drive-operations.ts,
 * transport/rpc-batch.ts), the lock calls and their answers (transport/lock-operations.ts); this
 * table is the control plane.
 *
 * Adding an operation (events, replication, KMS): add an entry to `peerOperations` with its two
 * decoders; the compiler then refuses every handler table until it has a handler for it, and
 * test/peer-protocol.test.ts wants an example of it (round trip and a malformed request).
 *
 * It lives in ops/ because its answers are the managers' status records (ops/heal.ts,
 * ops/decommission.ts, ops/rebalance.ts).
 */
import { SvcError } from '../errors/index.js';
import { callPeer, type Peer, type PeerCallOptions } from '../cluster/peer-client.js';
import type { DecommissionStatus } from './decommission.js';
import type { HealPath, HealSequenceStatus } from './heal.js';
import type { RebalanceStatus } from './rebalance.js';
import type { KmsKeyStatus } from './kms/kms.js';
import type { KmsRewrapStatus } from '../contracts/kms.js';
import type { ListenPollAnswer } from './events/listen.js';
import type { MetricsHistory } from '../contracts/metrics-history.js';
import type { NodeReplicationStatus } from './replication/replicator.js';
import type { ResyncState } from './replication/resync.js';
import type { TierDeletionStats } from './tier/deletion-queue.js';

/** Reads a value off the wire as a T, or throws MalformedPeerMessage naming where (`at`) it went wrong. */
export type Decoder<T> = (value: unknown, at: string) => T;

const malformed = (at: string, wanted: string): SvcError => new SvcError('MalformedPeerMessage', `${at} must be ${wanted}`, { at });

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const text: Decoder<string> = (value, at) => {
  if (typeof value !== 'string') throw malformed(at, 'a string');
  return value;
};
const flag: Decoder<boolean> = (value, at) => {
  if (typeof value !== 'boolean') throw malformed(at, 'true or false');
  return value;
};
const whole: Decoder<number> = (value, at) => {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw malformed(at, 'a whole number');
  return value;
};
const finite: Decoder<number> = (value, at) => {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw malformed(at, 'a finite number');
  return value;
};
const oneOf = <const T extends readonly string[]>(...choices: T): Decoder<T[number]> => (value, at) => {
  if (typeof value !== 'string' || !choices.includes(value)) throw malformed(at, `one of ${choices.join(', ')}`);
  return value as T[number];
};
const exactly = <const T extends boolean>(wanted: T): Decoder<T> => (value, at) => {
  if (value !== wanted) throw malformed(at, String(wanted));
  return wanted;
};
const listOf = <T>(item: Decoder<T>): Decoder<T[]> => (value, at) => {
  if (!Array.isArray(value)) throw malformed(at, 'a list');
  return value.map((entry, index) => item(entry, `${at}[${index}]`));
};

/** A field that may be absent (a JSON body omits undefined). */
interface Optional<T> {
  optional: Decoder<T>;
}
const optional = <T>(decoder: Decoder<T>): Optional<T> => ({ optional: decoder });
type Field = Decoder<unknown> | Optional<unknown>;
type Shape = Record<string, Field>;
type RequiredFields<S extends Shape> = { [K in keyof S as S[K] extends Decoder<unknown> ? K : never]: S[K] extends Decoder<infer T> ? T : never };
type OptionalFields<S extends Shape> = { [K in keyof S as S[K] extends Optional<unknown> ? K : never]?: S[K] extends Optional<infer T> ? T : never };
type Flat<T> = { [K in keyof T]: T[K] };
type ShapeOf<S extends Shape> = Flat<RequiredFields<S> & OptionalFields<S>>;

/**
 * An object with these fields. `strict`: a field not named is refused (requests); otherwise the
 * named fields are checked and the rest passed on (status records in answers).
 */
function record<S extends Shape>(shape: S, strict: boolean): Decoder<ShapeOf<S>> {
  return (value, at) => {
    if (!isRecord(value)) throw malformed(at, 'an object');
    if (strict) {
      const unknown = Object.keys(value).find((name) => !(name in shape));
      if (unknown !== undefined) throw malformed(`${at}.${unknown}`, 'absent (no such field)');
    }
    const decoded: Record<string, unknown> = strict ? {} : { ...value };
    for (const [name, field] of Object.entries(shape)) {
      if (typeof field !== 'function') {
        if (value[name] !== undefined) decoded[name] = field.optional(value[name], `${at}.${name}`);
      } else decoded[name] = field(value[name], `${at}.${name}`);
    }
    return decoded as ShapeOf<S>;
  };
}
const request = <S extends Shape>(shape: S): Decoder<ShapeOf<S>> => record(shape, true);
const answer = <S extends Shape>(shape: S): Decoder<ShapeOf<S>> => record(shape, false);

/** A status record of one of the managers: its identifying fields are checked, the rest passed on. */
const decommissionStatus = answer({ pool: whole, state: text }) as Decoder<unknown> as Decoder<DecommissionStatus>;
const rebalanceStatus = answer({ pools: listOf(answer({})) }) as Decoder<unknown> as Decoder<RebalanceStatus>;
const healSequenceStatus = answer({ clientToken: text, status: oneOf('running', 'finished', 'stopped', 'failed') }) as Decoder<unknown> as Decoder<HealSequenceStatus>;
const kmsKeyStatus = answer({ keyId: text, enabled: flag, version: whole }) as Decoder<unknown> as Decoder<KmsKeyStatus>;
const kmsRewrapStatus = answer({ state: oneOf('none', 'running', 'finished', 'failed') }) as Decoder<unknown> as Decoder<KmsRewrapStatus>;
const healPath: Decoder<HealPath> = request({ bucket: optional(text), prefix: optional(text) });
const tierDeletionStats = answer({ tier: text, pending: whole, deleted: whole, failed: whole, dropped: whole, oldestQueuedAt: optional(text), lastError: optional(text) }) as Decoder<unknown> as Decoder<TierDeletionStats>;
const resyncState = answer({ id: text, bucket: text, bucketArn: text, status: oneOf('running', 'completed', 'failed') }) as Decoder<unknown> as Decoder<ResyncState>;

/** Every peer operation: the decoder of its request and of its answer. */
export const peerOperations = {
  /** A heal sequence whose client token names this node: its status, or stop it. */
  'heal-sequence': { request: request({ clientToken: text, path: healPath, stop: flag }), answer: healSequenceStatus },
  /** The leader announces a rebalance event; the peer reloads rebalance.bin (the admission fence). */
  'rebalance-event': { request: request({ event: oneOf('started', 'rolled-back', 'stopped'), id: text }), answer: answer({ acknowledged: exactly(true) }) },
  /** Rebalance control forwarded to the leader. */
  'rebalance-start': { request: request({}), answer: answer({ id: text }) },
  'rebalance-stop': { request: request({}), answer: rebalanceStatus },
  'rebalance-status': { request: request({}), answer: rebalanceStatus },
  /** Decommission control forwarded to the leader. */
  'decommission-start': { request: request({ pools: listOf(whole) }), answer: answer({ entries: listOf(decommissionStatus) }) },
  'decommission-cancel': { request: request({ pool: whole }), answer: answer({ entry: decommissionStatus }) },
  'decommission-clear': { request: request({ pool: whole }), answer: answer({ cleared: exactly(true) }) },
  'decommission-status': { request: request({ pool: optional(whole) }), answer: answer({ entries: listOf(decommissionStatus) }) },
  /** Notices: reload users and policies, forget cached buckets, reload pool.bin. */
  'iam-changed': { request: request({}), answer: answer({ reloaded: exactly(true) }) },
  'buckets-changed': { request: request({ bucket: optional(text) }), answer: answer({ invalidated: exactly(true) }) },
  'pool-meta-changed': { request: request({}), answer: answer({ reloaded: exactly(true) }) },
  /** KMS keys: reread kms.bin (a key rotated, disabled or enabled); a rotation and the re-wrap's status, forwarded to the leader. */
  'kms-changed': { request: request({}), answer: answer({ reloaded: exactly(true) }) },
  'kms-rotate': { request: request({ keyId: text }), answer: answer({ key: kmsKeyStatus, rewrap: kmsRewrapStatus }) },
  'kms-rewrap-status': { request: request({}), answer: kmsRewrapStatus },
  /** A live listener on another node polls this one for its bucket's events (ops/events/listen.ts). */
  'event-listen': {
    request: request({ listener: text, bucket: text, prefix: optional(text), suffix: optional(text), events: optional(listOf(text)), waitMs: whole, stop: optional(flag) }),
    answer: answer({ messages: listOf(answer({ EventName: text, Key: text, Records: listOf(answer({})) })), cutOff: optional(text) }) as Decoder<unknown> as Decoder<ListenPollAnswer>,
  },
  /** Event targets were added or removed through the admin API: the peer rereads event-targets.bin and applies it. */
  'event-targets-changed': { request: request({}), answer: answer({ reloaded: exactly(true) }) },
  /** The peer's own replication queues and resyncs (a cluster-wide `rc admin replicate status`). */
  'replication-status': {
    request: request({ bucket: optional(text) }),
    answer: answer({ targets: listOf(answer({ arn: text, sourceBucket: text, depth: whole, completed: whole, sentBytes: whole, failed: whole, unsupported: whole })), resyncs: listOf(resyncState) }) as Decoder<unknown> as Decoder<NodeReplicationStatus>,
  },
  /** A resync forwarded to the leader, which runs every resync of the deployment. */
  'replication-resync': { request: request({ bucket: text, bucketArn: optional(text) }), answer: answer({ resyncs: listOf(resyncState) }) },
  /** The peer's own queue of objects waiting to be deleted on a tier (a cluster-wide `rc admin tier info`). */
  'tier-deletions': { request: request({ tier: text }), answer: answer({ deletions: tierDeletionStats }) },
  /** The peer's own metrics in the Prometheus text format (a cluster-wide scrape). */
  metrics: { request: request({}), answer: answer({ text }) },
  /** The peer's own recent metrics history (the console's cluster graphs). */
  'metrics-history': { request: request({}), answer: answer({ intervalMs: whole, latencyBoundsSeconds: listOf(finite), samples: listOf(answer({ atMs: whole })) }) as Decoder<unknown> as Decoder<MetricsHistory> },
  /** A console session was signed out or ended on another node: the peer refuses its cookie until `untilMs` (its absolute expiry). */
  'console-session-ended': { request: request({ sessionId: text, untilMs: whole }), answer: answer({ revoked: exactly(true) }) },
} as const satisfies Record<string, { request: Decoder<unknown>; answer: Decoder<unknown> }>;

export type PeerOperation = keyof typeof peerOperations;
/** The operations the observability side of a node answers (the others are the admin services'). */
export type ObservabilityOperation = 'metrics' | 'metrics-history';
/** The operation the console side of a node answers. */
export type ConsoleOperation = 'console-session-ended';
export type PeerRequest<Op extends PeerOperation> = ReturnType<(typeof peerOperations)[Op]['request']>;
export type PeerAnswer<Op extends PeerOperation> = ReturnType<(typeof peerOperations)[Op]['answer']>;

/** Every operation with its request: what a node may ask a peer. */
export type PeerCall = { [Op in PeerOperation]: { op: Op; request: PeerRequest<Op> } }[PeerOperation];

/** One handler per operation, typed by it: a table that misses one, or answers the wrong shape, does not compile. */
export type PeerHandlerTable = { [Op in PeerOperation]: (request: PeerRequest<Op>) => Promise<PeerAnswer<Op>> };

export const peerOperationNames = Object.keys(peerOperations) as PeerOperation[];

export function isPeerOperation(name: string): name is PeerOperation {
  return Object.hasOwn(peerOperations, name);
}

/** The operation named on the wire; UnknownPeerOperation for any other name. */
export function peerOperationOf(name: string): PeerOperation {
  if (!isPeerOperation(name)) throw new SvcError('UnknownPeerOperation', `no peer operation is named '${name.slice(0, 64)}'`, { operation: name.slice(0, 64) });
  return name;
}

/** A request as it travels: its JSON text. */
export function encodePeerRequest<Op extends PeerOperation>(_op: Op, body: PeerRequest<Op>): string {
  return JSON.stringify(body);
}

/** A received request (parsed JSON) as the operation's typed request, or UnknownPeerOperation / MalformedPeerMessage. */
export function decodePeerRequest(name: string, body: unknown): PeerCall {
  const op = peerOperationOf(name);
  return { op, request: peerOperations[op].request(body, op) } as PeerCall;
}

/** A received answer (parsed JSON) as the operation's typed answer, or MalformedPeerMessage. */
export function decodePeerAnswer<Op extends PeerOperation>(op: Op, body: unknown): PeerAnswer<Op> {
  return peerOperations[op].answer(body, `${op} answer`) as PeerAnswer<Op>;
}

/** Runs a received call through the table: decoded strictly, answered by the operation's handler. */
export function servePeerCall(table: PeerHandlerTable, name: string, body: unknown): Promise<unknown> {
  const call = decodePeerRequest(name, body);
  return (table[call.op] as (request: PeerRequest<typeof call.op>) => Promise<unknown>)(call.request);
}

/** Calls `op` on a peer: the request sent as its JSON, the answer decoded (MalformedPeerMessage when it is not the operation's). */
export async function askPeer<Op extends PeerOperation>(peer: Peer, op: Op, body: PeerRequest<Op>, options: PeerCallOptions): Promise<PeerAnswer<Op>> {
  return decodePeerAnswer(op, await callPeer(peer, op, body, options));
}
