/**
 * The wire format of an internode drive batch: one request carrying several drive operations for
 * one peer, one answer carrying each operation's outcome, in order. Everything is binary: the
 * small operation headers are a few fields packed after a byte of flags, and file bytes travel as
 * they are.
 *
 *   request  := entry*
 *   entry    := u8 flags, str8 op, str16 drive, [str16 path], [str16 source], [str16 target],
 *               [f64 offset], [f64 length], u32 bodyBytes, body
 *   answer   := outcome*
 *   outcome  := u8 status (0 ok, 1 error), u32 bytes, bytes
 *   error    := str8 code, message (UTF-8, the rest of the outcome's bytes)
 *
 * `strN` is a uN byte count and that many bytes of UTF-8; a field in brackets is there when its
 * flag is set (path 1, source 2, target 4, offset 8, length 16; `sync` is flag 32 with its value
 * in flag 64). All integers are big-endian. An ok outcome carries the operation's result (file
 * bytes, or JSON for stat and list, or nothing).
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

const flags = { path: 1, source: 2, target: 4, offset: 8, length: 16, sync: 32, syncValue: 64 } as const;
const knownFlags = 127;
const stringFields = ['path', 'source', 'target'] as const;
const numberFields = ['offset', 'length'] as const;
const maxStr8 = 0xff;
const maxStr16 = 0xffff;

function utf8Length(text: string, max: number, what: string): number {
  const length = Buffer.byteLength(text);
  if (length > max) throw new SvcError('InvalidArgument', `internode batch: ${what} is longer than ${max} bytes`);
  return length;
}

/** One entry's head: flags, op, drive, the fields present, and the body's length. */
function encodeHead(header: BatchOperationHeader, bodyBytes: number): Buffer {
  let flagBits = 0;
  let size = 1 + 1 + utf8Length(header.op, maxStr8, 'an operation name') + 2 + utf8Length(header.drive, maxStr16, 'a drive path') + 4;
  for (const field of stringFields) {
    const value = header[field];
    if (value === undefined) continue;
    flagBits |= flags[field];
    size += 2 + utf8Length(value, maxStr16, `a ${field}`);
  }
  for (const field of numberFields) {
    if (header[field] === undefined) continue;
    flagBits |= flags[field];
    size += 8;
  }
  if (header.sync !== undefined) flagBits |= flags.sync | (header.sync ? flags.syncValue : 0);
  const head = Buffer.allocUnsafe(size);
  head.writeUInt8(flagBits, 0);
  // Each string is written after the room for its length, which the write then answers.
  let at = 2 + head.write(header.op, 2);
  head.writeUInt8(at - 2, 1);
  const put16 = (text: string): void => {
    const length = head.write(text, at + 2);
    head.writeUInt16BE(length, at);
    at += 2 + length;
  };
  put16(header.drive);
  for (const field of stringFields) if (header[field] !== undefined) put16(header[field]);
  for (const field of numberFields) if (header[field] !== undefined) at = head.writeDoubleBE(header[field], at);
  head.writeUInt32BE(bodyBytes, at);
  return head;
}

/** The request body's pieces, ready to be written one after another (no copy of the payloads). */
export function encodeBatchRequest(operations: BatchOperation[]): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  for (const { header, body } of operations) {
    const payload = body ?? empty;
    pieces.push(encodeHead(header, payload.length));
    if (payload.length > 0) pieces.push(payload);
  }
  return pieces;
}

/** A bounds-checked reader over a whole message; a truncated message is InvalidArgument. */
class Cursor {
  private offset = 0;
  private readonly buffer: Buffer;

  constructor(bytes: Uint8Array) {
    this.buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get done(): boolean {
    return this.offset >= this.buffer.length;
  }

  private advance(length: number): number {
    const at = this.offset;
    if (at + length > this.buffer.length) throw new SvcError('InvalidArgument', 'internode batch message is truncated');
    this.offset = at + length;
    return at;
  }

  /** A plain Uint8Array view of the next `length` bytes (no copy). */
  take(length: number): Uint8Array {
    const at = this.advance(length);
    return new Uint8Array(this.buffer.buffer, this.buffer.byteOffset + at, length);
  }

  text(length: number): string {
    const at = this.advance(length);
    return this.buffer.toString('utf8', at, at + length);
  }

  u8(): number {
    return this.buffer[this.advance(1)]!;
  }

  u16(): number {
    return this.buffer.readUInt16BE(this.advance(2));
  }

  u32(): number {
    return this.buffer.readUInt32BE(this.advance(4));
  }

  f64(): number {
    return this.buffer.readDoubleBE(this.advance(8));
  }

  /** The bytes not yet read, as UTF-8. */
  rest(): string {
    return this.text(this.buffer.length - this.offset);
  }
}

export function decodeBatchRequest(bytes: Uint8Array): BatchOperation[] {
  const cursor = new Cursor(bytes);
  const operations: BatchOperation[] = [];
  while (!cursor.done) {
    const flagBits = cursor.u8();
    if ((flagBits & ~knownFlags) !== 0) throw new SvcError('InvalidArgument', 'internode batch operation header has unknown fields');
    const op = cursor.text(cursor.u8());
    const header: BatchOperationHeader = { drive: cursor.text(cursor.u16()), op };
    for (const field of stringFields) if (flagBits & flags[field]) header[field] = cursor.text(cursor.u16());
    for (const field of numberFields) if (flagBits & flags[field]) header[field] = cursor.f64();
    if (flagBits & flags.sync) header.sync = (flagBits & flags.syncValue) !== 0;
    if (op === '') throw new SvcError('InvalidArgument', 'internode batch operation needs an op');
    operations.push({ header, body: cursor.take(cursor.u32()) });
  }
  return operations;
}

export function encodeBatchAnswer(outcomes: BatchOutcome[]): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  for (const outcome of outcomes) {
    if (outcome.ok) {
      const head = Buffer.allocUnsafe(5);
      head.writeUInt8(0, 0);
      head.writeUInt32BE(outcome.bytes.length, 1);
      pieces.push(head);
      if (outcome.bytes.length > 0) pieces.push(outcome.bytes);
      continue;
    }
    const code = Buffer.from(outcome.code).subarray(0, maxStr8);
    const message = Buffer.from(outcome.message);
    const head = Buffer.allocUnsafe(6 + code.length);
    head.writeUInt8(1, 0);
    head.writeUInt32BE(1 + code.length + message.length, 1);
    head.writeUInt8(code.length, 5);
    code.copy(head, 6);
    pieces.push(head, message);
  }
  return pieces;
}

export function decodeBatchAnswer(bytes: Uint8Array, expected: number): BatchOutcome[] {
  const cursor = new Cursor(bytes);
  const outcomes: BatchOutcome[] = [];
  while (!cursor.done) {
    const status = cursor.u8();
    const length = cursor.u32();
    outcomes.push(status === 0 ? { ok: true, bytes: cursor.take(length) } : failedOutcome(cursor.take(length)));
  }
  if (outcomes.length !== expected) throw wrongCount(outcomes.length, expected);
  return outcomes;
}

function failedOutcome(bytes: Uint8Array): BatchOutcome {
  const error = new Cursor(bytes);
  const code = error.text(error.u8());
  return { ok: false, code: code || 'InternalError', message: error.rest() };
}

function wrongCount(outcomes: number | string, expected: number): SvcError {
  return new SvcError('InvalidArgument', `internode batch answer has ${outcomes} outcomes for ${expected} operations`);
}

const outcomeHeadBytes = 5;

/**
 * Decodes an answer as its bytes arrive, in pieces of any size (an AnswerSink of the internode
 * stream): each ok outcome's bytes are copied once, from the receive buffer straight into the
 * memory its operation named (`into[index]`, as much as fits; the outcome is a view of what was
 * filled), or into memory of their own for an operation that named none. `end()` gives the same
 * outcomes `decodeBatchAnswer` would, and refuses the same malformed answers.
 */
export class BatchAnswerReceiver {
  private readonly outcomes: BatchOutcome[] = [];
  private readonly head = Buffer.allocUnsafe(outcomeHeadBytes);
  private headFill = 0;
  /** The outcome being received: its status, where its bytes go, how many are kept there, and how many are still to come. */
  private status = 0;
  private target: Uint8Array | undefined;
  private kept = 0;
  private left = 0;

  constructor(private readonly into: readonly (Uint8Array | undefined)[]) {}

  write(bytes: Uint8Array): void {
    let at = 0;
    while (at < bytes.length) {
      if (!this.target) {
        const copied = Math.min(outcomeHeadBytes - this.headFill, bytes.length - at);
        this.head.set(bytes.subarray(at, at + copied), this.headFill);
        this.headFill += copied;
        at += copied;
        if (this.headFill === outcomeHeadBytes) this.begin();
        continue;
      }
      const passed = Math.min(this.left, bytes.length - at);
      const copied = Math.min(this.target.length - this.kept, passed);
      if (copied > 0) this.target.set(bytes.subarray(at, at + copied), this.kept);
      this.kept += copied;
      this.left -= passed;
      at += passed;
      if (this.left === 0) this.complete();
    }
  }

  end(): BatchOutcome[] {
    if (this.target || this.headFill > 0) throw new SvcError('InvalidArgument', 'internode batch message is truncated');
    if (this.outcomes.length !== this.into.length) throw wrongCount(this.outcomes.length, this.into.length);
    return this.outcomes;
  }

  private begin(): void {
    this.headFill = 0;
    const index = this.outcomes.length;
    if (index >= this.into.length) throw wrongCount(`more than ${index}`, this.into.length);
    this.status = this.head.readUInt8(0);
    this.left = this.head.readUInt32BE(1);
    this.kept = 0;
    const into = this.status === 0 ? this.into[index] : undefined;
    this.target = into ? into.subarray(0, Math.min(this.left, into.length)) : ownMemory(this.left);
    if (this.left === 0) this.complete();
  }

  private complete(): void {
    const bytes = this.target!;
    this.target = undefined;
    this.outcomes.push(this.status === 0 ? { ok: true, bytes } : failedOutcome(bytes));
  }
}

/** Fresh memory for `length` bytes, as a plain Uint8Array. */
function ownMemory(length: number): Uint8Array {
  const buffer = Buffer.allocUnsafe(length);
  return new Uint8Array(buffer.buffer, buffer.byteOffset, length);
}

/** Trailer a remote writer's request ends with to abort the file instead of keeping it. */
export const writerTrailer = 'x-svc-writer';
