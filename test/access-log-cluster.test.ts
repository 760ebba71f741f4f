/**
 * Server access logging on a two-node process cluster: each node journals the requests it
 * answered and writes its own log objects, so every request is in exactly one log record, from
 * the node that answered it (its host id), with no record lost or written twice when a node is
 * stopped (SIGTERM) and started again between requests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, PutBucketLoggingCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';
import { s3ClientFor } from './helpers/server-process.js';
import { waitFor } from './helpers/poll.js';

let cluster: ProcessCluster;

beforeAll(async () => {
  cluster = await startProcessCluster({ nodes: 2, drivesPerNode: 2, env: { SVC_ACCESS_LOG_FLUSH_INTERVAL_MS: '200' } });
}, 120_000);
afterAll(async () => {
  await cluster?.destroy();
});

const clients = (): S3Client[] => cluster.urls.map((url) => s3ClientFor(url));

async function putRound(round: string): Promise<string[]> {
  const keys: string[] = [];
  for (const [node, s3] of clients().entries()) {
    for (let index = 0; index < 8; index += 1) {
      const Key = `${round}-node${node}-${index}`;
      await s3.send(new PutObjectCommand({ Bucket: 'source', Key, Body: Key }));
      keys.push(Key);
    }
  }
  return keys;
}

/** Every log line in the logs bucket, with the key of the object it is in. */
async function logLines(): Promise<{ object: string; line: string }[]> {
  const s3 = clients()[0]!;
  const lines: { object: string; line: string }[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: 'logs', Prefix: 'access/', ...(token ? { ContinuationToken: token } : {}) }));
    for (const item of page.Contents ?? []) {
      const text = await (await s3.send(new GetObjectCommand({ Bucket: 'logs', Key: item.Key! }))).Body!.transformToString();
      for (const line of text.split('\n')) if (line !== '') lines.push({ object: item.Key!, line });
    }
    token = page.NextContinuationToken;
  } while (token);
  return lines;
}

describe('access logging on a cluster', () => {
  it('every request in exactly one record, from the node that answered it, across a restart', async () => {
    const [first] = clients();
    await first!.send(new CreateBucketCommand({ Bucket: 'source' }));
    await first!.send(new CreateBucketCommand({ Bucket: 'logs' }));
    await first!.send(new PutBucketLoggingCommand({ Bucket: 'source', BucketLoggingStatus: { LoggingEnabled: { TargetBucket: 'logs', TargetPrefix: 'access/' } } }));
    const keys = await putRound('before');
    // Node 1 is stopped right after answering: what it journaled and had not written yet is written after its start.
    await cluster.stop(1);
    await cluster.start(1);
    keys.push(...(await putRound('after')));

    const lines = await waitFor('every request in the logs', async () => {
      const seen = await logLines();
      return keys.every((key) => seen.some(({ line }) => line.includes(`REST.PUT.OBJECT ${key} `))) ? seen : undefined;
    }, { timeoutMs: 60_000, intervalMs: 250 });
    const hostIds = new Set<string>();
    for (const key of keys) {
      const records = lines.filter(({ line }) => line.includes(`REST.PUT.OBJECT ${key} `));
      expect(records, key).toHaveLength(1);
      // Field 19 is the host id (the node's name): the node the key's client talked to.
      const hostId = records[0]!.line.replace(/"(?:[^"\\]|\\.)*"/g, 'Q').replace(/\[[^\]]*\]/g, 'T').split(' ')[18]!;
      expect(hostId, key).not.toBe('-');
      hostIds.add(`${key.split('-')[1]} ${hostId}`);
    }
    // Each node's requests carry one host id, and the two nodes' differ.
    expect(new Set([...hostIds].map((entry) => entry.split(' ')[0])).size).toBe(2);
    expect(hostIds.size).toBe(2);
    // Log objects are per node: no object holds records of both nodes.
    const byObject = new Map<string, Set<string>>();
    for (const { object, line } of lines) byObject.set(object, (byObject.get(object) ?? new Set()).add(line.replace(/"(?:[^"\\]|\\.)*"/g, 'Q').replace(/\[[^\]]*\]/g, 'T').split(' ')[18]!));
    for (const [object, ids] of byObject) expect(ids.size, object).toBe(1);
  }, 180_000);
});
