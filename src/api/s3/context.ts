/** What every S3 handler receives: the parsed request, the object layer, and reply helpers. */
import type { Readable } from 'node:stream';
import type { ObjectLayer } from '../../object/index.js';
import type { Kms } from '../../ops/kms/kms.js';
import type { CompressionSettings } from '../../cluster/compression-config.js';
import type { AuthResult } from './auth/sigv4.js';
import { SvcError } from '../../errors/index.js';
import type { EventSink, ObjectEvent } from '../../ops/events/types.js';
import type { ReplicationChange, ReplicationSink } from '../../ops/replication/types.js';

export interface S3Request {
  method: string;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  /** The raw body stream (already signature-decoded for aws-chunked bodies). */
  body: AsyncIterable<Uint8Array>;
  auth: AuthResult;
  rawHeaders: Record<string, string | string[] | undefined>;
  trailers?: Map<string, string>;
  /** The request came over TLS (SSE-C keys are refused otherwise unless SVC_KMS_ALLOW_INSECURE_SSEC is on). */
  secureTransport?: boolean;
  /** Checks one more permission of the caller (a key of DeleteObjects); AccessDenied when it is not held. */
  authorize?: (action: string, bucket: string, key?: string) => Promise<void>;
}

/**
 * An object body sent chunk by chunk; each chunk is handed back through `release` once the
 * socket has taken it (its memory then serves another read).
 */
export interface ChunkStream {
  chunks: AsyncIterable<Uint8Array>;
  release(chunk: Uint8Array): void;
}

export interface S3Response {
  status: number;
  headers: Record<string, string | number>;
  body?: string | Uint8Array | Readable | ChunkStream;
  /** The changes this answer reports, for bucket notifications; queued before it is sent. */
  events?: ObjectEvent[];
  /** Changes to replicate that raise no event (retention, legal hold); queued before it is sent. */
  replicate?: ReplicationChange[];
  /** The request wrote a replica (another deployment's version): nothing it changed is replicated again. */
  replica?: boolean;
}

export function isChunkStream(body: S3Response['body']): body is ChunkStream {
  return typeof body === 'object' && body !== null && 'chunks' in body && 'release' in body;
}

export interface S3Context {
  objects: ObjectLayer;
  region: string;
  nowMs(): number;
  /** Bucket notifications; absent, no rule can name a target and nothing is sent. */
  events?: EventSink;
  /** Bucket replication; absent, no rule can name a destination and nothing is replicated. */
  replication?: ReplicationSink;
  /** Server-side encryption: the KMS (undefined without SVC_KMS_SECRET_KEY) and the SSE-C setting. */
  encryption?: { kms(): Kms | undefined; allowInsecureSsec: boolean };
  /** Transparent compression of new objects; absent or off, nothing is compressed. */
  compression?: CompressionSettings;
  /** The canonical id of the account that owns every bucket (the root credentials' access key); absent: the caller's. */
  ownerId?: string;
  /** The remote tiers lifecycle transitions name (undefined until storage is up). */
  tiers?: () => { has(name: string): Promise<boolean> } | undefined;
}

export function headerValue(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Reads a whole (small) body: one longer than `limitBytes` is refused with MaxMessageLengthExceeded. */
export async function readAll(body: AsyncIterable<Uint8Array>, limitBytes: number): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const part of body) {
    total += part.length;
    if (total > limitBytes) throw new SvcError('MaxMessageLengthExceeded', `Your request was too big: the body may hold ${limitBytes} bytes at most.`);
    parts.push(part);
  }
  return new Uint8Array(Buffer.concat(parts));
}
