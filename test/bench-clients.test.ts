import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { createLoadClient, payloadOf, type ClientKind } from '../bench/clients.js';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';

let root: string;
let server: SvcProcess;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-bench-clients-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_CONSOLE_ENABLE: 'false' } });
});
afterAll(async () => {
  await server?.kill();
  await rm(root, { recursive: true, force: true });
});

describe.each<ClientKind>(['http', 'sdk'])('the benchmark load generator: %s client', (kind) => {
  it('stores what it PUTs (with its CRC-32 checksum) and reads every byte back', async () => {
    const client = await createLoadClient(kind, { endpoint: server.url, ...testCredentials });
    const bucket = `load-${kind}`;
    try {
      await client.createBucket(bucket);
      for (const size of [4096, 3 * 1024 * 1024 + 17]) {
        const payload = payloadOf(randomBytes(size));
        await client.put(bucket, `object-${size}`, payload);
        expect(await client.get(bucket, `object-${size}`)).toBe(size);
        const s3 = s3ClientFor(server.url);
        const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: `object-${size}`, ChecksumMode: 'ENABLED' }));
        expect(head.ChecksumCRC32).toBe(payload.crc32Base64);
        const stored = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: `object-${size}` }));
        expect(Buffer.from(await stored.Body!.transformToByteArray()).equals(payload.bytes)).toBe(true);
        s3.destroy();
      }
    } finally {
      client.destroy();
    }
  });

  it('fails, naming the S3 error, when the server refuses a request', async () => {
    const client = await createLoadClient(kind, { endpoint: server.url, accessKeyId: testCredentials.accessKeyId, secretAccessKey: 'not-the-secret' });
    try {
      const refused = await client.put('load-refused', 'key', payloadOf(Buffer.from('x'))).then(() => undefined, (error: Error) => error);
      expect(`${refused?.name} ${refused?.message}`).toMatch(/SignatureDoesNotMatch/);
    } finally {
      client.destroy();
    }
  });
});
