/**
 * The remote-drive service of internode RPC, on the S3 listener under /svc/rpc/v1/drive/<op>:
 * every Drive method of a local drive, addressed by its endpoint path, with shard data streamed
 * both ways; small operations for several drives (or objects) travel together in batches on the
 * internode stream (rpc-stream-plugin.ts, runDriveBatch here). Every request needs a valid SvcRpc token; without one nothing is done (403).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { isSvcError, SvcError } from '../../errors/index.js';
import type { Drive } from '../../drive/index.js';
import { verifyRpcToken } from '../../transport/rpc-token.js';
import { decodeBatchRequest, encodeBatchAnswer, writerTrailer, type BatchOperationHeader, type BatchOutcome } from '../../transport/rpc-batch.js';
import { limits } from '../../util/limits.js';
import type { BufferPool } from '../../util/buffer-pool.js';
import { isBatchDriveOperation, isRequestDriveOperation, type BatchDriveOperation, type RequestDriveOperation, type requestDriveOperations } from '../../transport/drive-operations.js';

export const driveRpcPrefix = '/svc/rpc/v1/drive';

export const launchHashHeader = 'x-svc-launch-hash';


export interface DriveRpcOptions {
  rpcKey: Buffer;
  /** Hash of this node's launch arguments and layout settings; peers must send the same. */
  launchHash?: string;
  /** The local drive served for an endpoint path, if this node has it. */
  driveFor(path: string): Drive | undefined;
  nowMs(): number;
}

type Query = Record<string, string | undefined>;
type Handler = (drive: Drive, query: Query, request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

const required = (query: Query, name: string): string => {
  const value = query[name];
  if (value === undefined) throw new SvcError('InvalidArgument', `missing query parameter '${name}'`);
  return value;
};
const integer = (query: Query, name: string): number | undefined => {
  const value = query[name];
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new SvcError('InvalidArgument', `'${name}' must be a non-negative integer`);
  return Number(value);
};
const bytesOf = async (request: FastifyRequest): Promise<Uint8Array> => {
  const parts: Uint8Array[] = [];
  for await (const part of request.raw) parts.push(part as Uint8Array);
  return new Uint8Array(Buffer.concat(parts));
};
/** Answers 204 once the awaited drive call has finished. */
const doneAfter = (reply: FastifyReply, _finished: unknown) => reply.code(204).send();
/** A Buffer over the same memory (no copy). */
const asBuffer = (bytes: Uint8Array): Buffer => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));

const handlers: { [Op in RequestDriveOperation]: { method: (typeof requestDriveOperations)[Op]; handle: Handler } } = {
  read: { method: 'GET', handle: async (drive, query, _request, reply) => reply.send(asBuffer(await drive.readFile(required(query, 'path')))) },
  range: {
    method: 'GET',
    handle: async (drive, query, _request, reply) => reply.send(asBuffer(await drive.readRange(required(query, 'path'), integer(query, 'offset') ?? 0, integer(query, 'length') ?? 0))),
  },
  stream: {
    method: 'GET',
    handle: async (drive, query, _request, reply) => {
      const options = { ...(query.offset !== undefined ? { offset: integer(query, 'offset')! } : {}), ...(query.length !== undefined ? { length: integer(query, 'length')! } : {}) };
      const path = required(query, 'path');
      await drive.stat(path); // a missing file is an error before any byte is sent
      return reply.send(Readable.from(drive.readStream(path, options)));
    },
  },
  write: { method: 'PUT', handle: async (drive, query, request, reply) => doneAfter(reply, await drive.writeFile(required(query, 'path'), await bytesOf(request), { sync: query.sync === '1' })) },
  atomic: { method: 'PUT', handle: async (drive, query, request, reply) => doneAfter(reply, await drive.writeFileAtomic(required(query, 'path'), await bytesOf(request))) },
  append: { method: 'PUT', handle: async (drive, query, request, reply) => doneAfter(reply, await drive.appendFile(required(query, 'path'), await bytesOf(request))) },
  writer: { method: 'PUT', handle: (drive, query, request, reply) => streamIntoWriter(drive, required(query, 'path'), request, reply) },
  mkdir: { method: 'POST', handle: async (drive, query, _request, reply) => doneAfter(reply, await drive.makeDir(required(query, 'path'))) },
  rename: { method: 'POST', handle: async (drive, query, _request, reply) => doneAfter(reply, await drive.rename(required(query, 'source'), required(query, 'target'))) },
  'delete-file': { method: 'POST', handle: async (drive, query, _request, reply) => doneAfter(reply, await drive.deleteFile(required(query, 'path'))) },
  'delete-dir': { method: 'POST', handle: async (drive, query, _request, reply) => doneAfter(reply, await drive.deleteDir(required(query, 'path'))) },
  'delete-recursive': { method: 'POST', handle: async (drive, query, _request, reply) => doneAfter(reply, await drive.deleteRecursive(required(query, 'path'))) },
  list: { method: 'GET', handle: async (drive, query, _request, reply) => reply.send(await drive.listDir(query.path ?? '')) },
  walk: {
    method: 'GET',
    handle: async (drive, query, _request, reply) => {
      const lines = async function* (): AsyncGenerator<string> {
        for await (const path of drive.walk(query.prefix ?? '', query.startAfter !== undefined ? { startAfter: query.startAfter } : {})) yield `${JSON.stringify(path)}\n`;
      };
      return reply.type('application/x-ndjson').send(Readable.from(lines()));
    },
  },
  stat: { method: 'GET', handle: async (drive, query, _request, reply) => reply.send(await drive.stat(query.path ?? '')) },
  'disk-info': { method: 'GET', handle: async (drive, _query, _request, reply) => reply.send(await drive.diskInfo()) },
};

/**
 * The operations a batch may carry: the small ones, each answering with bytes (or nothing).
 * `hold(bytes)` lends a pooled buffer for an answer, kept until the answer has been sent.
 */
type BatchHandler = (drive: Drive, header: BatchOperationHeader, body: Uint8Array, hold: (bytes: number) => Uint8Array) => Promise<Uint8Array | void>;
const pathOf = (header: BatchOperationHeader, name: 'path' | 'source' | 'target' = 'path'): string => {
  const value = header[name];
  if (typeof value !== 'string') throw new SvcError('InvalidArgument', `missing '${name}'`);
  return value;
};
const jsonBytes = (value: unknown): Uint8Array => Buffer.from(JSON.stringify(value));
/** A range's length: a whole number of bytes. */
const lengthOf = (header: BatchOperationHeader): number => {
  const length = header.length ?? 0;
  if (!Number.isInteger(length) || length < 0) throw new SvcError('InvalidArgument', "a range's length must be a whole number of bytes");
  return length;
};
const batchHandlers: Record<BatchDriveOperation, BatchHandler> = {
  read: (drive, header) => drive.readFile(pathOf(header)),
  range: (drive, header, _body, hold) => {
    const length = lengthOf(header);
    return drive.readRange(pathOf(header), header.offset ?? 0, length, hold(length));
  },
  write: (drive, header, body) => drive.writeFile(pathOf(header), body, { sync: header.sync === true }),
  atomic: (drive, header, body) => drive.writeFileAtomic(pathOf(header), body),
  append: (drive, header, body) => drive.appendFile(pathOf(header), body),
  mkdir: (drive, header) => drive.makeDir(pathOf(header)),
  rename: (drive, header) => drive.rename(pathOf(header, 'source'), pathOf(header, 'target')),
  'delete-file': (drive, header) => drive.deleteFile(pathOf(header)),
  'delete-dir': (drive, header) => drive.deleteDir(pathOf(header)),
  'delete-recursive': (drive, header) => drive.deleteRecursive(pathOf(header)),
  list: async (drive, header) => jsonBytes(await drive.listDir(header.path ?? '')),
  stat: async (drive, header) => jsonBytes(await drive.stat(header.path ?? '')),
};

/**
 * A batch of drive operations (src/transport/rpc-batch.ts), as a frame of an internode stream
 * (rpc-stream-plugin.ts) carries it: every operation run at once (they were issued at once by the
 * caller, on different drives or for different objects), each answered on its own: one failing
 * operation fails only itself. Ranges are read into pooled buffers (`held`), which the caller
 * gives back to `buffers` (the transport's) once the answer has been sent.
 */
export async function runDriveBatch(driveFor: (path: string) => Drive | undefined, body: Uint8Array, buffers: BufferPool): Promise<{ answer: Uint8Array[]; held: Uint8Array[] }> {
  const operations = decodeBatchRequest(body);
  if (operations.length > limits.rpcBatchMaxOperations) throw new SvcError('InvalidArgument', `an internode batch carries at most ${limits.rpcBatchMaxOperations} operations`);
  const held: Uint8Array[] = [];
  const hold = (bytes: number): Uint8Array => {
    // Ranges past a batch's payload size (never a GET's or a heal's) are not worth keeping memory for.
    const buffer = bytes > limits.rpcBatchMaxBytes ? Buffer.allocUnsafe(bytes) : buffers.acquire(bytes).subarray(0, bytes);
    held.push(buffer);
    return buffer;
  };
  const outcomes = await Promise.all(
    operations.map(async ({ header, body: payload }): Promise<BatchOutcome> => {
      try {
        const handle = isBatchDriveOperation(header.op) ? batchHandlers[header.op] : undefined;
        if (!handle) throw new SvcError('InvalidArgument', 'unknown drive operation');
        const drive = driveFor(header.drive);
        if (!drive) throw new SvcError('DriveOffline', `this node serves no drive at '${header.drive}'`);
        return { ok: true, bytes: (await handle(drive, header, payload ?? new Uint8Array(0), hold)) ?? new Uint8Array(0) };
      } catch (error) {
        const known = isSvcError(error) ? error : new SvcError('InternalError', String(error));
        return { ok: false, code: known.code, message: known.message };
      }
    }),
  );
  return { answer: encodeBatchAnswer(outcomes), held };
}

/** The largest batch accepted in a frame. */
export const maxBatchBodyBytes = limits.rpcBatchMaxBytes + limits.rpcBatchMaxOperations * 4096;

async function streamIntoWriter(drive: Drive, path: string, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const writer = await drive.openWriter(path);
  let complete = false;
  request.raw.once('aborted', () => {
    if (!complete) void writer.abort();
  });
  try {
    for await (const chunk of request.raw) await writer.write(chunk as Uint8Array);
    complete = true;
    // The client's abort() ends the body with this trailer and waits for the answer.
    if (request.raw.trailers[writerTrailer] === 'abort') await writer.abort();
    else await writer.close();
  } catch (error) {
    await writer.abort();
    throw error;
  }
  return reply.code(204).send();
}

export async function driveRpcPlugin(app: FastifyInstance, options: DriveRpcOptions): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, parse) => parse(null, undefined));
  app.route({
    method: ['GET', 'PUT', 'POST'],
    url: `${driveRpcPrefix}/:op`,
    handler: async (request, reply) => {
      try {
        verifyRpcToken(options.rpcKey, request.headers.authorization, options.nowMs());
        if (options.launchHash !== undefined && request.headers[launchHashHeader] !== options.launchHash) {
          throw new SvcError('InvalidConfiguration', 'refused by a peer: the launch arguments (endpoints, pool order, set width or storage-class variables) differ from this node\'s; every node must run the identical command');
        }
        const name = (request.params as { op: string }).op;
        const op = isRequestDriveOperation(name) ? handlers[name] : undefined;
        if (!op || op.method !== request.method) throw new SvcError('InvalidArgument', 'unknown drive operation');
        const query = request.query as Query;
        const drive = options.driveFor(required(query, 'drive'));
        if (!drive) throw new SvcError('DriveOffline', `this node serves no drive at '${query.drive}'`);
        return await op.handle(drive, query, request, reply);
      } catch (error) {
        const known = isSvcError(error) ? error : new SvcError('InternalError', String(error));
        if (reply.sent) return reply;
        return reply.code(known.code === 'AccessDenied' ? 403 : known.httpStatus).send({ code: known.code, message: known.message });
      }
    },
  });
}
