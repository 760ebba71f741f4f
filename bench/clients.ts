/**
 * The load generator's two S3 clients, behind one small interface:
 *
 * - `http` (the default): each request signed with SigV4 by the AWS SDK's own signer
 *   (@smithy/signature-v4) and sent over a keep-alive node:http agent. A PUT carries what the SDK
 *   sends for a PutObject (the payload's SHA-256 signed in `x-amz-content-sha256`, and its CRC-32
 *   in `x-amz-checksum-crc32`), so the server does the same work for it; the two digests are
 *   computed once per distinct body, outside the timed phases. A GET asks for the checksum
 *   (`x-amz-checksum-mode: ENABLED`, as the SDK does) and checks every byte against the CRC-32 the
 *   server returns, when it returns one, and the length always.
 * - `sdk`: the AWS SDK's S3Client, which on this 2-core machine spends about 1.4 ms of CPU per
 *   4 KiB PUT (and hashes every 64 MiB body again for each request): CPU the server under test
 *   then lacks.
 */
import { createHash, createHmac } from 'node:crypto';
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { crc32 } from 'node:zlib';
import { SignatureV4 } from '@smithy/signature-v4';

export type ClientKind = 'http' | 'sdk';

/** A body and its digests, computed once however often it is sent. */
export interface Payload {
  bytes: Buffer;
  sha256Hex: string;
  crc32Base64: string;
}

export interface LoadClient {
  createBucket(bucket: string): Promise<void>;
  put(bucket: string, key: string, payload: Payload): Promise<void>;
  /** Reads the whole object; resolves with its length in bytes. */
  get(bucket: string, key: string): Promise<number>;
  destroy(): void;
}

export interface ClientOptions {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Ask for SSE-S3 on every PUT (`x-amz-server-side-encryption: AES256`). */
  sse?: boolean;
}

export function payloadOf(bytes: Buffer): Payload {
  return { bytes, sha256Hex: createHash('sha256').update(bytes).digest('hex'), crc32Base64: crc32Base64(crc32(bytes)) };
}

/**
 * A client of the given kind. The SDK's module is loaded only for the `sdk` client: loaded in
 * every load thread, its tens of megabytes of heap were marked again at every major collection.
 */
export async function createLoadClient(kind: ClientKind, options: ClientOptions): Promise<LoadClient> {
  if (kind === 'http') return new SignedHttpClient(options);
  const { SdkClient } = await import('./sdk-client.js');
  return new SdkClient(options);
}

function crc32Base64(value: number): string {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value >>> 0);
  return bytes.toString('base64');
}

const emptySha256Hex = createHash('sha256').digest('hex');
export const maxSockets = 64;

/** What the signer hands its hash (the SDK's SourceData). */
type SourceData = string | ArrayBuffer | ArrayBufferView;

function bytesOf(data: SourceData): string | Uint8Array {
  if (typeof data === 'string') return data;
  return ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);
}

/** The hash the signer asks for, over node:crypto (the SDK's default is a JavaScript SHA-256). */
class NodeSha256 {
  private readonly hash;

  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytesOf(secret));
  }

  update(data: SourceData): void {
    this.hash.update(bytesOf(data));
  }

  async digest(): Promise<Uint8Array> {
    return this.hash.digest();
  }
}

class SignedHttpClient implements LoadClient {
  private readonly url: URL;
  private readonly signer: SignatureV4;
  private readonly agent = new Agent({ keepAlive: true, maxSockets });

  constructor(private readonly options: ClientOptions) {
    this.url = new URL(options.endpoint);
    this.signer = new SignatureV4({
      service: 's3',
      region: 'us-east-1',
      credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey },
      sha256: NodeSha256,
      uriEscapePath: false,
    });
  }

  async createBucket(bucket: string): Promise<void> {
    const response = await this.send('PUT', `/${bucket}`, { 'x-amz-content-sha256': emptySha256Hex });
    await expectStatus(response, 'CreateBucket');
    response.resume();
  }

  async put(bucket: string, key: string, payload: Payload): Promise<void> {
    const response = await this.send(
      'PUT',
      `/${bucket}/${key}`,
      {
        'content-length': String(payload.bytes.length),
        'content-type': 'application/octet-stream',
        'x-amz-content-sha256': payload.sha256Hex,
        'x-amz-checksum-crc32': payload.crc32Base64,
        'x-amz-sdk-checksum-algorithm': 'CRC32',
        ...(this.options.sse ? { 'x-amz-server-side-encryption': 'AES256' } : {}),
      },
      payload.bytes,
    );
    await expectStatus(response, `PUT ${key}`);
    response.resume();
  }

  async get(bucket: string, key: string): Promise<number> {
    const response = await this.send('GET', `/${bucket}/${key}`, { 'x-amz-content-sha256': emptySha256Hex, 'x-amz-checksum-mode': 'ENABLED' });
    await expectStatus(response, `GET ${key}`);
    let length = 0;
    let crc = 0;
    for await (const chunk of response as AsyncIterable<Buffer>) {
      length += chunk.length;
      crc = crc32(chunk, crc);
    }
    const expectedLength = Number(response.headers['content-length']);
    if (length !== expectedLength) throw new Error(`GET ${key}: ${length} bytes arrived, Content-Length said ${expectedLength}`);
    const expectedCrc = response.headers['x-amz-checksum-crc32'];
    if (typeof expectedCrc === 'string' && !expectedCrc.includes('-') && expectedCrc !== crc32Base64(crc)) {
      throw new Error(`GET ${key}: the body does not match its x-amz-checksum-crc32 ${expectedCrc}`);
    }
    return length;
  }

  destroy(): void {
    this.agent.destroy();
  }

  private async send(method: 'GET' | 'PUT', path: string, headers: Record<string, string>, body?: Buffer): Promise<IncomingMessage> {
    const signed = await this.signer.sign({
      method,
      protocol: this.url.protocol,
      hostname: this.url.hostname,
      port: Number(this.url.port),
      path,
      query: {},
      headers: { host: this.url.host, ...headers },
    });
    return new Promise((resolve, reject) => {
      const request = httpRequest({ agent: this.agent, host: this.url.hostname, port: this.url.port, method, path, headers: signed.headers }, resolve);
      request.on('error', reject);
      request.end(body);
    });
  }
}

async function expectStatus(response: IncomingMessage, what: string): Promise<void> {
  if (response.statusCode === 200) return;
  let text = '';
  for await (const chunk of response as AsyncIterable<Buffer>) text += chunk.toString();
  throw new Error(`${what}: HTTP ${response.statusCode} ${text.slice(0, 300)}`);
}
