/**
 * The peer protocol (src/ops/peer-protocol.ts): every operation round-trips through its encoding
 * and its decoders, and through a real pair of HTTP server and client (api/rpc/peer-rpc-plugin.ts,
 * cluster/peer-client.ts); an unknown operation, a malformed request or a malformed answer is a
 * named error and runs no handler. The handler table is exhaustive: the `@ts-expect-error` lines
 * below are checked by `npm run typecheck` (a table that misses a case, or answers the wrong
 * shape, does not compile).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { peerRpcPlugin } from '../src/api/rpc/peer-rpc-plugin.js';
import { callPeer } from '../src/cluster/peer-client.js';
import { isSvcError } from '../src/errors/index.js';
import {
  askPeer,
  decodePeerAnswer,
  decodePeerRequest,
  encodePeerRequest,
  peerOperationNames,
  type PeerAnswer,
  type PeerHandlerTable,
  type PeerOperation,
  type PeerRequest,
} from '../src/ops/peer-protocol.js';
import type { DecommissionStatus } from '../src/ops/decommission.js';
import type { HealSequenceStatus } from '../src/ops/heal.js';
import type { RebalanceStatus } from '../src/ops/rebalance.js';
import { rpcKeyFor } from '../src/transport/rpc-token.js';
import { codeOf } from './helpers/codes.js';

const entry: DecommissionStatus = { pool: 1, pattern: 'http://n{1...2}/d{1...4}', id: 'd-1', state: 'active', queuedMs: 1, updatedMs: 2, unresolved: [], progress: { bucketsDone: 0, objectsMoved: 3, bytesMoved: 4, objectsFailed: 0 } } as unknown as DecommissionStatus;
const rebalance: RebalanceStatus = { id: 'r-1', goalUsed: 0.5, startedAt: '2026-01-01T00:00:00.000Z', stoppedAt: null, pools: [{ pool: 0 } as unknown as RebalanceStatus['pools'][number]] };
const heal: HealSequenceStatus = { clientToken: 't-1@0', path: { bucket: 'b' }, options: {}, status: 'running', startedAt: '2026-01-01T00:00:00.000Z', counts: {}, items: [] } as unknown as HealSequenceStatus;

/** One request and answer of every operation (a new operation without an example does not compile). */
const kmsKey = { keyId: 'backups', origin: 'named' as const, createdAt: '2026-11-29T03:00:00.000Z', enabled: true, version: 2, rotatedAt: '2026-11-29T04:00:00.000Z', encryptionOk: true, decryptionOk: true };
const kmsRewrap = { id: 'w-1', state: 'running' as const, keyIds: ['backups'], startedAt: '2026-11-29T04:00:00.000Z', versionsScanned: 10, rewrapped: 4, failed: 0, bucketsDone: 1, bucketsTotal: 2, currentBucket: 'b', resumed: 0 };

const examples: { [Op in PeerOperation]: { request: PeerRequest<Op>; answer: PeerAnswer<Op> } } = {
  'heal-sequence': { request: { clientToken: 't-1@0', path: { bucket: 'b', prefix: 'p/' }, stop: false }, answer: heal },
  'rebalance-event': { request: { event: 'rolled-back', id: 'r-1' }, answer: { acknowledged: true } },
  'rebalance-start': { request: {}, answer: { id: 'r-1' } },
  'rebalance-stop': { request: {}, answer: rebalance },
  'rebalance-status': { request: {}, answer: rebalance },
  'decommission-start': { request: { pools: [1, 2] }, answer: { entries: [entry] } },
  'decommission-cancel': { request: { pool: 1 }, answer: { entry } },
  'decommission-clear': { request: { pool: 1 }, answer: { cleared: true } },
  'decommission-status': { request: { pool: 1 }, answer: { entries: [entry] } },
  'iam-changed': { request: {}, answer: { reloaded: true } },
  'buckets-changed': { request: { bucket: 'photos' }, answer: { invalidated: true } },
  'pool-meta-changed': { request: {}, answer: { reloaded: true } },
  'kms-changed': { request: {}, answer: { reloaded: true } },
  'kms-rotate': { request: { keyId: 'backups' }, answer: { key: kmsKey, rewrap: kmsRewrap } },
  'kms-rewrap-status': { request: {}, answer: kmsRewrap },
  'event-listen': {
    request: { listener: 'l-1', bucket: 'photos', prefix: 'logs/', suffix: '.log', events: ['s3:ObjectCreated:*'], waitMs: 5_000 },
    answer: { messages: [{ EventName: 's3:ObjectCreated:Put', Key: 'photos/logs/a.log', Records: [{ eventVersion: '2.1', eventSource: 'aws:s3' }] } as never], cutOff: 'more than 10000 events waited for the listener' },
  },
  'event-targets-changed': { request: {}, answer: { reloaded: true } },
  'replication-status': {
    request: { bucket: 'photos' },
    answer: {
      targets: [{ arn: 'arn:svc:replication::3f2a9c01d4e5b6a7:photos-copy', id: '3f2a9c01d4e5b6a7', sourceBucket: 'photos', endpoint: 'http://127.0.0.2:9000', targetBucket: 'photos-copy', region: 'us-east-1', accessKey: 'replicator', createdMs: 1, depth: 2, sent: 5, failed: 1, dropped: 0, quarantined: 0, completed: 5, sentBytes: 20, unsupported: 0 }],
      resyncs: [{ id: 'photos-1', bucket: 'photos', bucketArn: 'arn:aws:s3:::photos-copy', status: 'running', startedMs: 1, updatedMs: 2, keys: 3, queued: 4 }],
    },
  },
  'replication-resync': { request: { bucket: 'photos', bucketArn: 'arn:aws:s3:::photos-copy' }, answer: { resyncs: [{ id: 'photos-1', bucket: 'photos', bucketArn: 'arn:aws:s3:::photos-copy', status: 'completed', startedMs: 1, updatedMs: 2, keys: 3, queued: 4 }] } },
  'tier-deletions': { request: { tier: 'WARM' }, answer: { deletions: { tier: 'WARM', pending: 2, deleted: 14, failed: 3, dropped: 0, oldestQueuedAt: '2026-11-29T07:10:00.000Z', lastError: 'tier WARM cannot be reached' } } },
  metrics: { request: {}, answer: { text: 'svc_up 1\n' } },
  'metrics-history': {
    request: {},
    answer: { intervalMs: 10_000, latencyBoundsSeconds: [0.001, 0.01], nodes: ['127.0.0.1:9000'], unreachable: [], samples: [{ atMs: 1_764_393_600_000, requests: 3, clientErrors: 1, serverErrors: 0, latencyCounts: [1, 2, 0], receivedBytes: 10, sentBytes: 20, driveOperations: 8, driveErrors: 0, healScannedObjects: 0, healedObjects: 0, readRepairs: 0 }] },
  },
  'console-session-ended': { request: { sessionId: 'kq3JxZ0h2Vb9aXc1', untilMs: 1_764_436_800_000 }, answer: { revoked: true } },
};

/** Requests each operation must refuse (a missing, mistyped or unknown field). */
const malformedRequests: { [Op in PeerOperation]: unknown[] } = {
  'heal-sequence': [{ clientToken: 7, path: {}, stop: false }, { clientToken: 't', path: { bucket: 1 }, stop: false }, { clientToken: 't', path: {} }],
  'rebalance-event': [{ event: 'paused', id: 'r' }, { event: 'started' }],
  'rebalance-start': [{ op: 'start' }, [], 'start'],
  'rebalance-stop': [{ extra: true }],
  'rebalance-status': [null],
  'decommission-start': [{ pools: ['1'] }, { pools: 1 }, {}],
  'decommission-cancel': [{}, { pool: '1' }, { pool: -1 }, { pool: 1.5 }],
  'decommission-clear': [{ pool: null }],
  'decommission-status': [{ pool: 'all' }, { pools: [1] }],
  'iam-changed': [{ user: 'x' }],
  'buckets-changed': [{ bucket: 3 }],
  'pool-meta-changed': [7],
  'kms-changed': [{ keyId: 'k' }],
  'kms-rotate': [{}, { keyId: 7 }, { keyId: 'k', force: true }],
  'kms-rewrap-status': [{ id: 'r' }],
  'event-listen': [{ listener: 'l', bucket: 'b' }, { listener: 'l', bucket: 'b', waitMs: -1 }, { listener: 'l', bucket: 'b', waitMs: 1, extra: true }, { listener: 'l', bucket: 'b', waitMs: 1, events: 's3:ObjectCreated:*' }],
  'event-targets-changed': [{ arn: 'arn:svc:sqs::1:webhook' }],
  'replication-status': [{ bucket: 7 }, { bucket: 'b', node: 'n1' }],
  'replication-resync': [{}, { bucket: 'b', bucketArn: 1 }, { bucket: 'b', watch: true }],
  'tier-deletions': [{}, { tier: 7 }, { tier: 'WARM', node: 'n1' }],
  metrics: [{ format: 'json' }],
  'metrics-history': [{ scope: 'node' }, 'all'],
  'console-session-ended': [{ sessionId: 'k' }, { sessionId: 7, untilMs: 1 }, { sessionId: 'k', untilMs: -1 }, { sessionId: 'k', untilMs: 1, accessKey: 'a' }],
};

const codeOfCall = async (promise: Promise<unknown>): Promise<string> =>
  promise.then(() => 'ok', (error: unknown) => (isSvcError(error) ? error.code : String(error)));

describe('the peer protocol', () => {
  it('names every operation once, with an example', () => {
    expect(Object.keys(examples).sort()).toEqual([...peerOperationNames].sort());
  });

  it.each(peerOperationNames)('%s round-trips through its encoding and decoders', (op) => {
    const { request, answer } = examples[op];
    expect(decodePeerRequest(op, JSON.parse(encodePeerRequest(op, request as never)))).toEqual({ op, request });
    expect(decodePeerAnswer(op, JSON.parse(JSON.stringify(answer)))).toEqual(answer);
  });

  it.each(peerOperationNames)('%s refuses a malformed request as MalformedPeerMessage', (op) => {
    for (const body of malformedRequests[op]) expect(codeOf(() => decodePeerRequest(op, body)), JSON.stringify(body)).toBe('MalformedPeerMessage');
  });

  it('refuses an unknown operation as UnknownPeerOperation (names of Object.prototype too)', () => {
    for (const name of ['decommission', 'rebalance', 'toString', '__proto__', '']) expect(codeOf(() => decodePeerRequest(name, {}))).toBe('UnknownPeerOperation');
  });

  it('refuses a malformed answer as MalformedPeerMessage', () => {
    expect(codeOf(() => decodePeerAnswer('decommission-start', { entries: [{ pool: 'one', state: 'active' }] }))).toBe('MalformedPeerMessage');
    expect(codeOf(() => decodePeerAnswer('iam-changed', { reloaded: 'yes' }))).toBe('MalformedPeerMessage');
    expect(codeOf(() => decodePeerAnswer('heal-sequence', { clientToken: 't', status: 'paused' }))).toBe('MalformedPeerMessage');
    expect(codeOf(() => decodePeerAnswer('tier-deletions', { deletions: { tier: 'WARM', pending: -1, deleted: 0, failed: 0, dropped: 0 } }))).toBe('MalformedPeerMessage');
  });

  it('refuses, at compile time, a handler table that misses an operation or answers the wrong shape', () => {
    const handlers = Object.fromEntries(peerOperationNames.map((op) => [op, async () => examples[op].answer])) as unknown as PeerHandlerTable;
    const { metrics: _metrics, ...withoutMetrics } = handlers;
    // @ts-expect-error -- 'metrics' is missing: the table is not exhaustive
    const missing: PeerHandlerTable = withoutMetrics;
    // @ts-expect-error -- iam-changed answers { reloaded: true }, not { reloaded: 'yes' }
    const wrong: PeerHandlerTable = { ...handlers, 'iam-changed': async () => ({ reloaded: 'yes' }) };
    expect([missing, wrong].every((table) => typeof table === 'object')).toBe(true);
  });
});

describe('the peer protocol between two real endpoints', () => {
  const rpcKey = rpcKeyFor('peeradmin', 'peeradmin-secret');
  const handled: PeerOperation[] = [];
  let app: FastifyInstance;
  let peer = { host: '127.0.0.1', port: 0 };
  /** Answers each operation's example, received requests noted; `broken` answers a wrong shape. */
  let broken = false;

  beforeAll(async () => {
    const table = Object.fromEntries(
      peerOperationNames.map((op) => [
        op,
        async (request: unknown) => {
          handled.push(op);
          expect(request).toEqual(examples[op].request);
          return broken ? { unexpected: true } : examples[op].answer;
        },
      ]),
    ) as unknown as PeerHandlerTable;
    app = Fastify();
    await app.register(peerRpcPlugin, { rpcKey, nowMs: () => Date.now(), handlers: () => table });
    await app.listen({ host: '127.0.0.1', port: 0 });
    peer = { host: '127.0.0.1', port: (app.server.address() as AddressInfo).port };
  });
  afterAll(async () => {
    await app.close();
  });

  it.each(peerOperationNames)('%s is served and answered as its types say', async (op) => {
    handled.length = 0;
    broken = false;
    expect(await askPeer(peer, op, examples[op].request as never, { rpcKey })).toEqual(examples[op].answer);
    expect(handled).toEqual([op]);
  });

  it('answers an unknown operation and a malformed request with their named errors, running no handler', async () => {
    handled.length = 0;
    expect(await codeOfCall(callPeer(peer, 'decommission', { op: 'start', pools: [1] }, { rpcKey }))).toBe('UnknownPeerOperation');
    expect(await codeOfCall(callPeer(peer, 'decommission-cancel', { pool: 'one' }, { rpcKey }))).toBe('MalformedPeerMessage');
    expect(await codeOfCall(callPeer(peer, 'iam-changed', { reload: 'all' }, { rpcKey }))).toBe('MalformedPeerMessage');
    expect(handled).toEqual([]);
  });

  it('refuses a call without the internode key before decoding it', async () => {
    handled.length = 0;
    expect(await codeOfCall(askPeer(peer, 'iam-changed', {}, { rpcKey: rpcKeyFor('peeradmin', 'another-secret') }))).toBe('AccessDenied');
    expect(handled).toEqual([]);
  });

  it('refuses an answer that is not the operation\'s shape as MalformedPeerMessage', async () => {
    broken = true;
    try {
      expect(await codeOfCall(askPeer(peer, 'rebalance-start', {}, { rpcKey }))).toBe('MalformedPeerMessage');
    } finally {
      broken = false;
    }
  });
});
