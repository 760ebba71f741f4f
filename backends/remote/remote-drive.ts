/**
 * A Drive on another node, reached over internode RPC (src/api/rpc/drive-rpc-plugin.ts): every
 * call is an HTTP request to the peer's S3 listener with a short-lived SvcRpc token, with
 * timeouts; shard data streams both ways. A peer that cannot be reached is an offline drive.
 */
import { request as httpRequest, Agent, type IncomingMessage, type ClientRequest } from 'node:http';
import { once } from 'node:events';
import { SvcError, isErrorCode } from '../../src/errors/index.js';
import { checkDrivePath, type DiskInfo, type Drive, type FileReader, type FileStat, type FileWriter } from '../../src/drive/index.js';
import { createRpcToken, rpcAuthScheme } from '../../src/util/rpc-token.js';
import { limits } from '../../src/util/limits.js';

const prefix = '/svc/rpc/v1/drive';

export interface RemoteDriveOptions {
  /** The endpoint as configured, e.g. http://node2:9000/data1. */
  endpoint: string;
  host: string;
  port: number;
  /** The drive's path on the peer (the endpoint's path). */
  path: string;
  rpcKey: Buffer;
  /** Sent with every call; a peer launched differently refuses it (InvalidConfiguration). */
  launchHash?: string;
  nowMs?: () => number;
  timeoutMs?: number;
  agent?: Agent;
}

const sharedAgent = new Agent({ keepAlive: true, maxSockets: 64 });

const timeoutMessage = 'internode RPC timed out';

/** The call failed before the peer answered, for a reason other than the RPC timeout. */
function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof SvcError) || error.code !== 'DriveOffline') return false;
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error && cause.message !== timeoutMessage;
}


export function createRemoteDrive(options: RemoteDriveOptions): Drive {
  return new RemoteDrive(options);
}

class RemoteDrive implements Drive {
  readonly endpoint: string;

  constructor(private readonly options: RemoteDriveOptions) {
    this.endpoint = options.endpoint;
  }

  private open(method: string, op: string, params: Record<string, string | number | undefined>): ClientRequest {
    const query = new URLSearchParams({ drive: this.options.path });
    for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, String(value));
    const token = createRpcToken(this.options.rpcKey, (this.options.nowMs ?? Date.now)());
    return httpRequest({
      host: this.options.host,
      port: this.options.port,
      method,
      path: `${prefix}/${op}?${query.toString()}`,
      headers: {
        authorization: `${rpcAuthScheme} ${token}`,
        'content-type': 'application/octet-stream',
        ...(this.options.launchHash !== undefined ? { 'x-svc-launch-hash': this.options.launchHash } : {}),
      },
      agent: this.options.agent ?? sharedAgent,
      timeout: this.options.timeoutMs ?? limits.rpcTimeoutMs,
    });
  }

  /** Sends a request and resolves with the response, or rejects with the drive error it names. */
  /**
   * Reads (GET) are retried a bounded number of times when the connection fails before any
   * answer (a peer restarting, a stale keep-alive socket); a timeout or any answer is final, and
   * writes are never retried: they are not all idempotent.
   */
  private async call(method: string, op: string, params: Record<string, string | number | undefined>, body?: Uint8Array): Promise<IncomingMessage> {
    for (let attempt = 0; ; attempt += 1) {
      const request = this.open(method, op, params);
      const response = this.responseOf(request);
      request.end(body === undefined ? undefined : Buffer.from(body.buffer, body.byteOffset, body.byteLength));
      try {
        return await response;
      } catch (error) {
        const retryable = method === 'GET' && isConnectionFailure(error) && attempt < limits.rpcReadRetries;
        if (!retryable) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50 * (attempt + 1)));
      }
    }
  }

  private async responseOf(request: ClientRequest): Promise<IncomingMessage> {
    request.on('timeout', () => request.destroy(new Error(timeoutMessage)));
    let response: IncomingMessage;
    try {
      [response] = (await once(request, 'response')) as [IncomingMessage];
    } catch (error) {
      throw new SvcError('DriveOffline', `drive ${this.endpoint} is unreachable: ${(error as Error).message}`, { endpoint: this.endpoint }, { cause: error });
    }
    if ((response.statusCode ?? 500) >= 400) throw await errorOf(response, this.endpoint);
    return response;
  }

  private async bytes(method: string, op: string, params: Record<string, string | number | undefined>, body?: Uint8Array): Promise<Uint8Array> {
    const response = await this.call(method, op, params, body);
    return readBody(response, this.endpoint);
  }

  private async json<T>(op: string, params: Record<string, string | number | undefined>): Promise<T> {
    return JSON.parse(Buffer.from(await this.bytes('GET', op, params)).toString('utf8')) as T;
  }

  private async action(op: string, params: Record<string, string | number | undefined>, body?: Uint8Array, method = 'POST'): Promise<void> {
    const response = await this.call(method, op, params, body);
    await readBody(response, this.endpoint);
  }

  readFile(path: string): Promise<Uint8Array> {
    return this.bytes('GET', 'read', { path: checkDrivePath(path) });
  }

  async readRange(path: string, offset: number, length: number, into?: Uint8Array): Promise<Uint8Array> {
    const bytes = await this.bytes('GET', 'range', { path: checkDrivePath(path), offset, length });
    if (!into) return bytes;
    into.set(bytes.subarray(0, Math.min(bytes.length, length)));
    return into.subarray(0, Math.min(bytes.length, length));
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

  writeFile(path: string, data: Uint8Array, options: { sync?: boolean } = {}): Promise<void> {
    return this.action('write', { path: checkDrivePath(path), sync: options.sync ? '1' : undefined }, data, 'PUT');
  }

  writeFileAtomic(path: string, data: Uint8Array): Promise<void> {
    return this.action('atomic', { path: checkDrivePath(path) }, data, 'PUT');
  }

  appendFile(path: string, data: Uint8Array): Promise<void> {
    return this.action('append', { path: checkDrivePath(path) }, data, 'PUT');
  }

  async openWriter(path: string): Promise<FileWriter> {
    const request = this.open('PUT', 'writer', { path: checkDrivePath(path) });
    request.setHeader('transfer-encoding', 'chunked');
    const response = this.responseOf(request);
    response.catch(() => undefined); // surfaced by write() or close()
    let failure: unknown;
    request.on('error', (error) => (failure ??= error));
    const endpoint = this.endpoint;
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
        request.destroy();
        await response.catch(() => undefined);
        // The peer removes the partial file when it sees the connection go; remove it here too, so
        // it is gone when abort() resolves.
        await this.deleteFile(path).catch(() => undefined);
      },
    };
  }

  makeDir(path: string): Promise<void> {
    return this.action('mkdir', { path: checkDrivePath(path) });
  }

  rename(source: string, target: string): Promise<void> {
    return this.action('rename', { source: checkDrivePath(source), target: checkDrivePath(target) });
  }

  deleteFile(path: string): Promise<void> {
    return this.action('delete-file', { path: checkDrivePath(path) });
  }

  deleteDir(path: string): Promise<void> {
    return this.action('delete-dir', { path: checkDrivePath(path) });
  }

  deleteRecursive(path: string): Promise<void> {
    return this.action('delete-recursive', { path: checkDrivePath(path) });
  }

  listDir(path: string): Promise<string[]> {
    return this.json('list', { path: checkDrivePath(path) });
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
    return this.json('stat', { path: checkDrivePath(path) });
  }

  async diskInfo(): Promise<DiskInfo> {
    try {
      return { ...(await this.json<DiskInfo>('disk-info', {})), endpoint: this.endpoint };
    } catch (error) {
      return { endpoint: this.endpoint, online: false, totalBytes: 0, freeBytes: 0, usedBytes: 0, error: String(error) };
    }
  }

  async close(): Promise<void> {
    // Connections are pooled by the agent.
  }
}

async function readBody(response: IncomingMessage, endpoint: string): Promise<Uint8Array> {
  const parts: Buffer[] = [];
  try {
    for await (const chunk of response) parts.push(chunk as Buffer);
  } catch (error) {
    throw new SvcError('DriveOffline', `drive ${endpoint}: response interrupted`, {}, { cause: error });
  }
  return new Uint8Array(Buffer.concat(parts));
}

async function errorOf(response: IncomingMessage, endpoint: string): Promise<SvcError> {
  const text = Buffer.from(await readBody(response, endpoint)).toString('utf8');
  try {
    const body = JSON.parse(text) as { code?: string; message?: string };
    if (body.code && isErrorCode(body.code)) return new SvcError(body.code, body.message, { endpoint, remote: true });
  } catch {
    // not a JSON error body
  }
  return new SvcError('DriveFaulty', `drive ${endpoint}: HTTP ${response.statusCode}: ${text.slice(0, 200)}`, { endpoint });
}
