/**
 * A Drive on another node, reached over internode RPC (src/api/rpc/drive-rpc-plugin.ts): HTTP
 * requests to the peer's S3 listener with a short-lived SvcRpc token, with timeouts, over
 * keep-alive connections. Small operations (reading and writing whole files, renames, deletes,
 * stat, list, ranges) travel in the peer's batches (peer-batcher.ts) with those of its other
 * drives and of concurrent requests; shard data streams both ways in requests of their own. A
 * peer that cannot be reached is an offline drive.
 */
import type { IncomingMessage } from 'node:http';
import { SvcError } from '../../src/errors/index.js';
import { checkDrivePath, type DiskInfo, type Drive, type FileReader, type FileStat, type FileWriter } from '../../src/drive/index.js';
import { limits } from '../../src/util/limits.js';
import { writerTrailer, type BatchOperationHeader } from '../../src/transport/rpc-batch.js';
import type { BatchDriveOperation, RequestDriveOperation, requestDriveOperations } from '../../src/transport/drive-operations.js';
import { batcherFor, type PeerBatcher } from './peer-batcher.js';
import { driveErrorOf, isConnectionFailure, openRpcRequest, readBody, responseOf, type PeerTarget } from './rpc-request.js';

export interface RemoteDriveOptions extends PeerTarget {
  /** The endpoint as configured, e.g. http://node2:9000/data1. */
  endpoint: string;
  /** The drive's path on the peer (the endpoint's path). */
  path: string;
}

export function createRemoteDrive(options: RemoteDriveOptions): Drive {
  return new RemoteDrive(options);
}

class RemoteDrive implements Drive {
  readonly endpoint: string;
  private readonly target: PeerTarget;
  /** Small operations travel in this peer's batches, with other drives' and other requests'. */
  private readonly batcher: PeerBatcher;

  constructor(private readonly options: RemoteDriveOptions) {
    this.endpoint = options.endpoint;
    this.target = options;
    this.batcher = batcherFor(options);
  }

  /** One small operation through the peer's batch; resolves with its answer's bytes. */
  private batched(op: BatchDriveOperation, fields: Omit<BatchOperationHeader, 'drive' | 'op'>, options: { body?: Uint8Array; read?: boolean; into?: Uint8Array } = {}): Promise<Uint8Array> {
    return this.batcher.submit({ drive: this.options.path, op, ...fields }, { ...(options.body ? { body: options.body } : {}), ...(options.into ? { into: options.into } : {}), read: options.read ?? false, endpoint: this.endpoint });
  }

  private async batchedJson<T>(op: BatchDriveOperation, fields: Omit<BatchOperationHeader, 'drive' | 'op'>): Promise<T> {
    return JSON.parse(Buffer.from(await this.batched(op, fields, { read: true })).toString('utf8')) as T;
  }

  private open<Op extends RequestDriveOperation>(method: (typeof requestDriveOperations)[Op], op: Op, params: Record<string, string | number | undefined>) {
    const query = new URLSearchParams({ drive: this.options.path });
    for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, String(value));
    return openRpcRequest(this.target, method, `${op}?${query.toString()}`);
  }

  /**
   * Sends a request and resolves with the response, or rejects with the drive error it names.
   * Reads (GET) are retried a bounded number of times when the connection fails before any
   * answer (a peer restarting, a stale keep-alive socket); a timeout or any answer is final, and
   * writes are never retried: they are not all idempotent.
   */
  private async call<Op extends RequestDriveOperation>(method: (typeof requestDriveOperations)[Op], op: Op, params: Record<string, string | number | undefined>): Promise<IncomingMessage> {
    for (let attempt = 0; ; attempt += 1) {
      const request = this.open(method, op, params);
      const response = responseOf(request);
      request.end();
      try {
        return await response;
      } catch (failure) {
        const retryable = method === 'GET' && isConnectionFailure(failure) && attempt < limits.rpcReadRetries;
        if (!retryable) throw driveErrorOf(failure, this.endpoint);
        await new Promise((resolve) => setTimeout(resolve, 50 * (attempt + 1)));
      }
    }
  }

  readFile(path: string): Promise<Uint8Array> {
    return this.batched('read', { path: checkDrivePath(path) }, { read: true });
  }

  /** Given `into`, the answer is copied there as it arrives (its frame's memory is reused), and the result is a view of it. */
  async readRange(path: string, offset: number, length: number, into?: Uint8Array): Promise<Uint8Array> {
    return this.batched('range', { path: checkDrivePath(path), offset, length }, { read: true, ...(into ? { into: into.subarray(0, length) } : {}) });
  }

  /** Reads ranges over RPC; the peer keeps nothing open between them. */
  async openReader(path: string): Promise<FileReader> {
    checkDrivePath(path);
    return { read: (offset, length, into) => this.readRange(path, offset, length, into), close: async () => undefined };
  }

  async *readStream(path: string, options: { offset?: number; length?: number } = {}): AsyncIterable<Uint8Array> {
    const response = await this.call('GET', 'stream', { path: checkDrivePath(path), offset: options.offset, length: options.length });
    try {
      for await (const chunk of response) yield chunk as Uint8Array;
    } catch (error) {
      throw new SvcError('DriveOffline', `drive ${this.endpoint}: stream interrupted`, {}, { cause: error });
    }
  }

  async writeFile(path: string, data: Uint8Array, options: { sync?: boolean } = {}): Promise<void> {
    await this.batched('write', { path: checkDrivePath(path), ...(options.sync ? { sync: true } : {}) }, { body: data });
  }

  async writeFileAtomic(path: string, data: Uint8Array): Promise<void> {
    await this.batched('atomic', { path: checkDrivePath(path) }, { body: data });
  }

  async appendFile(path: string, data: Uint8Array): Promise<void> {
    await this.batched('append', { path: checkDrivePath(path) }, { body: data });
  }

  async openWriter(path: string): Promise<FileWriter> {
    const request = this.open('PUT', 'writer', { path: checkDrivePath(path) });
    request.setHeader('transfer-encoding', 'chunked');
    const endpoint = this.endpoint;
    const response = responseOf(request).catch((exchangeFailure: unknown) => Promise.reject(driveErrorOf(exchangeFailure, endpoint)));
    response.catch(() => undefined); // surfaced by write() or close()
    let failure: unknown;
    request.on('error', (error) => (failure ??= error));
    const check = async (): Promise<void> => {
      if (failure) throw failure instanceof SvcError ? failure : new SvcError('DriveOffline', `drive ${endpoint}: writer connection failed`, {}, { cause: failure });
    };
    return {
      async write(chunk) {
        await check();
        // Resolve only once the bytes have left for the socket: the caller reuses the chunk's memory.
        const written = new Promise<void>((resolve, reject) => {
          request.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength), (error) => (error ? reject(error) : resolve()));
        });
        await Promise.race([written, response.then(() => undefined)]);
        await check();
      },
      async close() {
        await check();
        request.end();
        await readBody(await response, endpoint);
      },
      abort: async () => {
        // Ask the peer to abort (a trailer after the bytes sent) and wait for its answer, so the
        // partial file is gone when abort() resolves: a delete sent on another connection could
        // reach the peer before the writer's own request does.
        if (!failure && request.writable) {
          request.addTrailers({ [writerTrailer]: 'abort' });
          request.end();
          const answered = await response.then(
            (answer) => readBody(answer, endpoint).then(() => true),
            () => false,
          );
          if (answered) return;
        }
        request.destroy();
        await response.catch(() => undefined);
        // The peer removes the partial file when it sees the connection go; remove it here too.
        await this.deleteFile(path).catch(() => undefined);
      },
    };
  }

  async makeDir(path: string): Promise<void> {
    await this.batched('mkdir', { path: checkDrivePath(path) });
  }

  async rename(source: string, target: string): Promise<void> {
    await this.batched('rename', { source: checkDrivePath(source), target: checkDrivePath(target) });
  }

  async deleteFile(path: string): Promise<void> {
    await this.batched('delete-file', { path: checkDrivePath(path) });
  }

  async deleteDir(path: string): Promise<void> {
    await this.batched('delete-dir', { path: checkDrivePath(path) });
  }

  async deleteRecursive(path: string): Promise<void> {
    await this.batched('delete-recursive', { path: checkDrivePath(path) });
  }

  listDir(path: string): Promise<string[]> {
    return this.batchedJson('list', { path: checkDrivePath(path) });
  }

  async *walk(prefixPath: string, options: { startAfter?: string } = {}): AsyncIterable<string> {
    const response = await this.call('GET', 'walk', { prefix: checkDrivePath(prefixPath), startAfter: options.startAfter });
    let pending = '';
    for await (const chunk of response) {
      pending += (chunk as Buffer).toString('utf8');
      let newline = pending.indexOf('\n');
      while (newline >= 0) {
        yield JSON.parse(pending.slice(0, newline)) as string;
        pending = pending.slice(newline + 1);
        newline = pending.indexOf('\n');
      }
    }
  }

  stat(path: string): Promise<FileStat> {
    return this.batchedJson('stat', { path: checkDrivePath(path) });
  }

  async diskInfo(): Promise<DiskInfo> {
    try {
      const answer = await readBody(await this.call('GET', 'disk-info', {}), this.endpoint);
      return { ...(JSON.parse(Buffer.from(answer).toString('utf8')) as DiskInfo), endpoint: this.endpoint };
    } catch (error) {
      return { endpoint: this.endpoint, online: false, totalBytes: 0, freeBytes: 0, usedBytes: 0, error: String(error) };
    }
  }

  async close(): Promise<void> {
    // Connections are pooled by the agent.
  }
}
