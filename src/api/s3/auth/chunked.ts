/**
 * Decoder of `aws-chunked` request bodies: STREAMING-AWS4-HMAC-SHA256-PAYLOAD (every chunk
 * signed, chained from the seed signature), its -TRAILER variant, and
 * STREAMING-UNSIGNED-PAYLOAD-TRAILER. Payload bytes stream out as they arrive; a chunk whose
 * signature fails throws before the body ends, so the write it feeds commits nothing.
 */
import { createHash } from 'node:crypto';
import { SvcError } from '../../../errors/index.js';
import { hmacHex, type AuthResult } from './sigv4.js';
import { limits } from '../../../util/limits.js';

const emptySha256 = createHash('sha256').update('').digest('hex');

export interface ChunkedBody {
  body: AsyncIterable<Uint8Array>;
  /** Trailer headers (lower-case names), known once the body has been read to its end. */
  trailers: Map<string, string>;
}

export function decodeAwsChunked(source: AsyncIterable<Uint8Array>, auth: AuthResult, decodedContentLength?: number): ChunkedBody {
  const trailers = new Map<string, string>();
  return { body: decode(source, auth, trailers, decodedContentLength), trailers };
}

class ByteReader {
  private buffer: Buffer = Buffer.alloc(0);
  private readonly iterator: AsyncIterator<Uint8Array>;
  private done = false;

  constructor(source: AsyncIterable<Uint8Array>) {
    this.iterator = source[Symbol.asyncIterator]();
  }

  private async fill(): Promise<boolean> {
    if (this.done) return false;
    const step = await this.iterator.next();
    if (step.done) {
      this.done = true;
      return false;
    }
    this.buffer = this.buffer.length === 0 ? Buffer.from(step.value) : Buffer.concat([this.buffer, step.value]);
    return true;
  }

  async line(): Promise<string> {
    for (;;) {
      const end = this.buffer.indexOf('\r\n');
      if (end >= 0) {
        const text = this.buffer.toString('latin1', 0, end);
        this.buffer = this.buffer.subarray(end + 2);
        return text;
      }
      if (this.buffer.length > limits.maxChunkHeaderLineBytes) throw malformed('a chunk header line is too long');
      if (!(await this.fill())) throw malformed('the body ended inside a chunk header');
    }
  }

  /** Yields exactly `length` bytes in pieces as they arrive. */
  async *bytes(length: number): AsyncGenerator<Buffer> {
    let remaining = length;
    while (remaining > 0) {
      if (this.buffer.length === 0 && !(await this.fill())) throw new SvcError('IncompleteBody', 'the body ended inside a chunk');
      const take = Math.min(remaining, this.buffer.length);
      const piece = this.buffer.subarray(0, take);
      this.buffer = this.buffer.subarray(take);
      remaining -= take;
      yield piece;
    }
  }

  async expectCrlf(): Promise<void> {
    const text = await this.line();
    if (text !== '') throw malformed('a chunk is not followed by CRLF');
  }
}

async function* decode(source: AsyncIterable<Uint8Array>, auth: AuthResult, trailers: Map<string, string>, decodedLength?: number): AsyncGenerator<Uint8Array> {
  const signed = auth.payload.kind === 'streaming-signed' || auth.payload.kind === 'streaming-signed-trailer';
  const withTrailer = auth.payload.kind === 'streaming-signed-trailer' || auth.payload.kind === 'streaming-unsigned-trailer';
  const reader = new ByteReader(source);
  let previous = auth.seedSignature;
  let total = 0;
  for (;;) {
    const { size, signature } = parseChunkHeader(await reader.line(), signed);
    const hash = signed ? createHash('sha256') : undefined;
    for await (const piece of reader.bytes(size)) {
      hash?.update(piece);
      total += piece.length;
      if (decodedLength !== undefined && total > decodedLength) throw new SvcError('InvalidRequest', 'the body is longer than x-amz-decoded-content-length');
      yield piece;
    }
    if (signed) {
      const toSign = ['AWS4-HMAC-SHA256-PAYLOAD', auth.amzDate, auth.scope, previous, emptySha256, hash!.digest('hex')].join('\n');
      if (hmacHex(auth.signingKey, toSign) !== signature) throw new SvcError('SignatureDoesNotMatch', 'a chunk signature does not match');
      previous = signature!;
    }
    if (size === 0) break;
    await reader.expectCrlf();
  }
  if (withTrailer) await readTrailers(reader, auth, previous, signed, trailers);
  if (decodedLength !== undefined && total !== decodedLength) throw new SvcError('IncompleteBody', `received ${total} of ${decodedLength} bytes`);
}

function parseChunkHeader(line: string, signed: boolean): { size: number; signature?: string } {
  const match = /^([0-9a-fA-F]{1,16})(?:;chunk-signature=([0-9a-f]{64}))?$/.exec(line);
  if (!match) throw malformed(`bad chunk header '${line.slice(0, 80)}'`);
  if (signed && !match[2]) throw new SvcError('SignatureDoesNotMatch', 'a chunk carries no signature');
  const size = Number.parseInt(match[1]!, 16);
  if (!Number.isSafeInteger(size)) throw malformed('chunk size too large');
  return { size, ...(match[2] ? { signature: match[2] } : {}) };
}

async function readTrailers(reader: ByteReader, auth: AuthResult, previous: string, signed: boolean, trailers: Map<string, string>): Promise<void> {
  let text = '';
  let trailerSignature: string | undefined;
  for (;;) {
    const line = await reader.line();
    if (line === '') break;
    const index = line.indexOf(':');
    if (index <= 0) throw malformed(`bad trailer line '${line.slice(0, 80)}'`);
    const name = line.slice(0, index).trim().toLowerCase();
    const value = line.slice(index + 1).trim();
    if (name === 'x-amz-trailer-signature') {
      trailerSignature = value;
      continue;
    }
    trailers.set(name, value);
    text += `${name}:${value}\n`;
  }
  if (!signed) return;
  const toSign = ['AWS4-HMAC-SHA256-TRAILER', auth.amzDate, auth.scope, previous, createHash('sha256').update(text).digest('hex')].join('\n');
  if (trailerSignature !== hmacHex(auth.signingKey, toSign)) throw new SvcError('SignatureDoesNotMatch', 'the trailer signature does not match');
}

function malformed(problem: string): SvcError {
  return new SvcError('InvalidRequest', `malformed aws-chunked body: ${problem}`);
}
