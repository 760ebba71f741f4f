/**
 * The wire format of an internode drive batch: one request carrying several drive operations for
 * one peer, one answer carrying each operation's outcome, in order. Binary payloads (file bytes)
 * travel as they are; only the small operation headers and error bodies are JSON.
 *
 *   request  := entry*      entry  := u32 headerBytes, header (JSON), u32 bodyBytes, body
 *   answer   := outcome*    outcome := u8 status (0 ok, 1 error), u32 bytes, bytes
 *
 * All integers are big-endian. An ok outcome carries the operation's result (file bytes, or JSON
 * for stat and list, or nothing); an error outcome carries `{ code, message }` as JSON.
 */
import { SvcError } from '../errors/index.js';

/** One drive operation of a batch: the drive (its endpoint path on the peer), the operation and its arguments. */
export interface BatchOperationHeader {
  drive: string;
  op: string;
  path?: string;
  source?: string;
  target?: string;
  offset?: number;
  length?: number;
  sync?: boolean;
}

export interface BatchOperation {
  header: BatchOperationHeader;
  body?: Uint8Array;
}

export type BatchOutcome = { ok: true; bytes: Uint8Array } | { ok: false; code: string; message: string };

const empty = new Uint8Array(0);

function u32(value: number): Buffer {
  const bytes = Buffer.allocUnsafe(4);
  bytes.writeUInt32BE(value);
  return bytes;
}

/** The request body's pieces, ready to be written one after another (no copy of the payloads). */
export function encodeBatchRequest(operations: BatchOperation[]): Uint8Array[] {
  return operations.flatMap(({ header, body }) => {
    const headerBytes = Buffer.from(JSON.stringify(header));
    const payload = body ?? empty;
    return [u32(headerBytes.length), headerBytes, u32(payload.length), payload];
  });
}

/** A bounds-checked reader over a whole message; a truncated message is InvalidArgument. */
class Cursor {
  private offset = 0;

  constructor(private readonly bytes: Uint8Array) {}

  get done(): boolean {
    return this.offset >= this.bytes.length;
  }

  take(length: number): Uint8Array {
    if (this.offset + length > this.bytes.length) throw new SvcError('InvalidArgument', 'internode batch message is truncated');
    const view = this.bytes.subarray(this.offset, this.offset + length);
    this.offset += length;
    return view;
  }

  u8(): number {
    return this.take(1)[0]!;
  }

  u32(): number {
    const view = this.take(4);
    return ((view[0]! << 24) | (view[1]! << 16) | (view[2]! << 8) | view[3]!) >>> 0;
  }
}

export function decodeBatchRequest(bytes: Uint8Array): BatchOperation[] {
  const cursor = new Cursor(bytes);
  const operations: BatchOperation[] = [];
  while (!cursor.done) {
    let header: BatchOperationHeader;
    try {
      header = JSON.parse(Buffer.from(cursor.take(cursor.u32())).toString('utf8')) as BatchOperationHeader;
    } catch (error) {
      if (error instanceof SvcError) throw error;
      throw new SvcError('InvalidArgument', 'internode batch operation header is not JSON');
    }
    if (typeof header?.drive !== 'string' || typeof header.op !== 'string') throw new SvcError('InvalidArgument', 'internode batch operation needs a drive and an op');
    operations.push({ header, body: cursor.take(cursor.u32()) });
  }
  return operations;
}

export function encodeBatchAnswer(outcomes: BatchOutcome[]): Uint8Array[] {
  return outcomes.flatMap((outcome) => {
    const bytes = outcome.ok ? outcome.bytes : Buffer.from(JSON.stringify({ code: outcome.code, message: outcome.message }));
    return [Buffer.from([outcome.ok ? 0 : 1]), u32(bytes.length), bytes];
  });
}

export function decodeBatchAnswer(bytes: Uint8Array, expected: number): BatchOutcome[] {
  const cursor = new Cursor(bytes);
  const outcomes: BatchOutcome[] = [];
  while (!cursor.done) {
    const status = cursor.u8();
    const body = cursor.take(cursor.u32());
    if (status === 0) {
      outcomes.push({ ok: true, bytes: body });
      continue;
    }
    let parsed: { code?: unknown; message?: unknown } = {};
    try {
      parsed = JSON.parse(Buffer.from(body).toString('utf8')) as typeof parsed;
    } catch {
      // an error without a readable body: reported as InternalError below
    }
    outcomes.push({ ok: false, code: typeof parsed.code === 'string' ? parsed.code : 'InternalError', message: typeof parsed.message === 'string' ? parsed.message : 'internode batch operation failed' });
  }
  if (outcomes.length !== expected) throw new SvcError('InvalidArgument', `internode batch answer has ${outcomes.length} outcomes for ${expected} operations`);
  return outcomes;
}

/** Trailer a remote writer's request ends with to abort the file instead of keeping it. */
export const writerTrailer = 'x-svc-writer';
