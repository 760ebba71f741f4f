/**
 * The load generator's `sdk` client (bench/clients.ts): the AWS SDK's S3Client, which on this
 * 2-core machine spends about 1.4 ms of CPU per 4 KiB PUT (and hashes every 64 MiB body again for
 * each request): CPU the server under test then lacks.
 */
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { maxSockets, type ClientOptions, type LoadClient, type Payload } from './clients.js';

export class SdkClient implements LoadClient {
  private readonly s3: S3Client;
  private readonly sse: boolean;

  constructor(options: ClientOptions) {
    this.sse = options.sse === true;
    this.s3 = new S3Client({
      endpoint: options.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey },
      maxAttempts: 1,
      requestHandler: new NodeHttpHandler({ httpAgent: { maxSockets, keepAlive: true } as never }),
    });
  }

  async createBucket(bucket: string): Promise<void> {
    await this.s3.send(new CreateBucketCommand({ Bucket: bucket }));
  }

  async put(bucket: string, key: string, payload: Payload): Promise<void> {
    await this.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: payload.bytes, ...(this.sse ? { ServerSideEncryption: 'AES256' as const } : {}) }));
  }

  async get(bucket: string, key: string): Promise<number> {
    const object = await this.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    let length = 0;
    for await (const chunk of object.Body as AsyncIterable<Uint8Array>) length += chunk.length;
    return length;
  }

  destroy(): void {
    this.s3.destroy();
  }
}
