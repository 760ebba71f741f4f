/**
 * One peer's batch of small drive operations: every operation the remote drives of that peer are
 * asked for while this process runs one turn of its event loop (an erasure set reading xl.meta
 * from all of its drives, concurrent S3 requests writing theirs) travels in one frame of the
 * peer's internode stream (src/transport/), answered operation by
 * operation. While a batch to the peer is unanswered (limits.rpcBatchMaxInFlight), new operations
 * wait for its answer (for limits.rpcBatchMaxWaitMs at most) and then go together: under load, one
 * exchange carries the operations of every request that came meanwhile. The semantics are a single
 * call's: each operation has its own outcome and the RPC timeout counted from its submission, an
 * unreachable peer makes each operation DriveOffline, a batch of reads alone is tried again when
 * the connection failed before any answer, a batch holding any write never is.
 *
 * An operation may name where its answer goes (`into`: a range read into the caller's buffer). The
 * answer of a batch holding such an operation is decoded as it arrives: each outcome's bytes are
 * copied once, from the stream's receive buffer into its `into` (or into memory of its own).
 */
import { isSvcError } from '../../src/errors/index.js';
import { limits } from '../../src/util/limits.js';
import { TickBatches } from '../../src/transport/tick-batches.js';
import { BatchAnswerReceiver, decodeBatchAnswer, encodeBatchRequest, type BatchOperation, type BatchOperationHeader, type BatchOutcome } from '../../src/transport/rpc-batch.js';
import { RpcStreamFailure } from '../../src/transport/rpc-stream.js';
import { driveErrorOf, isConnectionFailure, remoteError, type ExchangeFailure, type PeerTarget } from './rpc-request.js';

interface Queued {
  operation: BatchOperation;
  /** The operation only reads: it may be sent again. */
  read: boolean;
  endpoint: string;
  /** Where the answer's bytes go (at most its length of them); the operation resolves with a view of it. */
  into?: Uint8Array;
  /** When it was submitted (performance.now()): its timeout counts from here, a wait for the window included. */
  queuedAt: number;
  resolve(bytes: Uint8Array): void;
  reject(error: unknown): void;
}

export class PeerBatcher {
  private readonly batches: TickBatches<Queued>;

  constructor(private readonly target: PeerTarget) {
    this.batches = new TickBatches<Queued>({
      send: (batch) => this.send(batch),
      maxItems: limits.rpcBatchMaxOperations,
      bytesOf: (entry) => entry.operation.body?.length ?? 0,
      maxBytes: limits.rpcBatchMaxBytes,
      maxInFlight: limits.rpcBatchMaxInFlight,
      maxWaitMs: limits.rpcBatchMaxWaitMs,
    });
  }

  /** Queues one operation for the next batch to this peer; resolves with its answer's bytes. */
  submit(header: BatchOperationHeader, options: { body?: Uint8Array; read: boolean; endpoint: string; into?: Uint8Array }): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      this.batches.push({ operation: { header, ...(options.body ? { body: options.body } : {}) }, read: options.read, endpoint: options.endpoint, ...(options.into ? { into: options.into } : {}), queuedAt: performance.now(), resolve, reject });
    });
  }

  private async send(batch: Queued[]): Promise<void> {
    const retryable = batch.every((entry) => entry.read);
    // The oldest operation's deadline (a run keeps the queue's order).
    const deadline = batch[0]!.queuedAt + (this.target.timeoutMs ?? limits.rpcTimeoutMs);
    for (let attempt = 0; ; attempt += 1) {
      try {
        const outcomes = await this.exchange(batch, Math.max(1, deadline - performance.now()));
        outcomes.forEach((outcome, index) => {
          const entry = batch[index]!;
          if (outcome.ok) entry.resolve(outcome.bytes);
          else entry.reject(remoteError(outcome.code, outcome.message, entry.endpoint));
        });
        return;
      } catch (failure) {
        if (retryable && isConnectionFailure(failure) && attempt < limits.rpcReadRetries) {
          await new Promise((resolve) => setTimeout(resolve, 50 * (attempt + 1)));
          continue;
        }
        for (const entry of batch) entry.reject(driveErrorOf(failure, entry.endpoint));
        return;
      }
    }
  }

  private async exchange(batch: Queued[], timeoutMs: number): Promise<BatchOutcome[]> {
    const request = encodeBatchRequest(batch.map((entry) => entry.operation));
    const stream = this.target.transport.streamTo(this.target);
    try {
      if (!batch.some((entry) => entry.into)) return decodeBatchAnswer(await stream.call('drive', request, timeoutMs), batch.length);
      return await stream.callInto('drive', request, timeoutMs, new BatchAnswerReceiver(batch.map((entry) => entry.into)));
    } catch (error) {
      if (isSvcError(error)) throw error; // the answer itself was malformed
      throw exchangeFailureOf(error);
    }
  }
}

/** A stream's failure as the exchange failure the remote drive reports. */
function exchangeFailureOf(error: unknown): ExchangeFailure {
  if (error instanceof RpcStreamFailure && error.kind === 'refused') return { kind: 'refused', status: error.status, text: error.text };
  return { kind: 'unreachable', cause: error instanceof Error ? error : new Error(String(error)) };
}

/** The batcher of one peer as reached with these credentials (shared by that peer's remote drives, kept by the transport). */
export function batcherFor(target: PeerTarget): PeerBatcher {
  const key = `${target.host}:${target.port}/${target.rpcKey.toString('hex')}/${target.launchHash ?? ''}/${target.timeoutMs ?? ''}`;
  return target.transport.perPeer('drive-batcher', key, () => new PeerBatcher(target));
}
