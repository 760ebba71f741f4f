/** Paging through 10,000 keys returns every key once, in order (v1 markers and v2 tokens). */
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { XMLParser } from 'fast-xml-parser';
import { createMemfsDrive } from '../backends/memfs/memfs-drive.js';
import { ErasureSet, LocalNamespaceLocker, ObjectLayer } from '../src/object/index.js';
import { listObjectsV1, listObjectsV2 } from '../src/api/s3/handlers/listing.js';
import type { S3Context, S3Request } from '../src/api/s3/context.js';
import { MiB } from '../src/util/limits.js';

const parser = new XMLParser({ isArray: (name) => name === 'Contents' || name === 'CommonPrefixes', parseTagValue: false });

async function buildLayer(): Promise<ObjectLayer> {
  const drives = Array.from({ length: 4 }, (_, index) => createMemfsDrive({ endpoint: `mem${index}` }));
  const set = new ErasureSet({
    poolIndex: 0, setIndex: 0, drives, deploymentId: randomUUID(), locker: new LocalNamespaceLocker(), clock: { nowMs: () => Date.now() },
    newId: randomUUID, standardParity: 2, rrsParity: 1, blockSizeBytes: MiB, listQuorum: 'optimal',
  });
  return new ObjectLayer({ deploymentId: randomUUID(), pools: [{ index: 0, sets: [set] }], clock: { nowMs: () => Date.now() } });
}

function request(query: Record<string, string>): S3Request {
  return { method: 'GET', query: new URLSearchParams(query), headers: {}, rawHeaders: {}, body: (async function* () {})(), auth: { accessKeyId: 'owner' } as S3Request['auth'] };
}

describe('listing pages', () => {
  it('pages through 10,000 keys with v2 tokens and v1 markers, every key once and in order', async () => {
    const objects = await buildLayer();
    await objects.makeBucket('many');
    const keys = Array.from({ length: 10_000 }, (_, index) => `k/${String(index % 97).padStart(2, '0')}/${index}`);
    let next = 0;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next < keys.length) {
        const key = keys[next++]!;
        await objects.putObject('many', key, (async function* () { yield Buffer.from(key); })(), { storageClass: 'STANDARD' });
      }
    }));
    const expected = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const context: S3Context = { objects, region: 'us-east-1', nowMs: () => Date.now() };

    const viaV2: string[] = [];
    let token: string | undefined;
    for (let pages = 0; pages < 20; pages += 1) {
      const response = await listObjectsV2(context, request({ 'list-type': '2', 'max-keys': '1000', ...(token ? { 'continuation-token': token } : {}) }), 'many');
      const result = parser.parse(String(response.body)).ListBucketResult;
      viaV2.push(...(result.Contents ?? []).map((item: { Key: string }) => item.Key));
      token = result.IsTruncated === 'true' ? result.NextContinuationToken : undefined;
      if (!token) break;
    }
    expect(viaV2).toEqual(expected);

    const viaV1: string[] = [];
    let marker = '';
    for (let pages = 0; pages < 20; pages += 1) {
      const response = await listObjectsV1(context, request({ 'max-keys': '1000', marker }), 'many');
      const result = parser.parse(String(response.body)).ListBucketResult;
      viaV1.push(...(result.Contents ?? []).map((item: { Key: string }) => item.Key));
      if (result.IsTruncated !== 'true') break;
      marker = result.NextMarker;
    }
    expect(viaV1).toEqual(expected);

    const prefixes: string[] = [];
    token = undefined;
    for (let pages = 0; pages < 20; pages += 1) {
      const response = await listObjectsV2(context, request({ 'list-type': '2', prefix: 'k/', delimiter: '/', 'max-keys': '10', ...(token ? { 'continuation-token': token } : {}) }), 'many');
      const result = parser.parse(String(response.body)).ListBucketResult;
      prefixes.push(...(result.CommonPrefixes ?? []).map((item: { Prefix: string }) => item.Prefix));
      token = result.IsTruncated === 'true' ? result.NextContinuationToken : undefined;
      if (!token) break;
    }
    expect(prefixes).toEqual(Array.from({ length: 97 }, (_, index) => `k/${String(index).padStart(2, '0')}/`));
  }, 180_000);
});
