/**
 * Behaviour under concurrent clients: every acknowledged write is read back at once by its writer,
 * listed at once, and still there with its last acknowledged body after all clients are done; a
 * key every client overwrites ends with one of the bodies written to it.
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { expectThat, type Check, type Target } from '../../runner/check.js';
import { createPrng } from '../../../src/util/prng.js';
import { awsGuide } from './sources.js';

const clients = 4;
const rounds = 8;

async function read(s3: S3Client, bucket: string, key: string): Promise<string> {
  const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return object.Body!.transformToString();
}

/** One client's writes, drawn from its own generator so that the run replays from the seed whatever the interleaving. */
async function writer(target: Target, s3: S3Client, bucket: string, client: number, acknowledged: Map<string, string>, shared: Set<string>): Promise<void> {
  const prng = createPrng(target.options.seed * 31 + client);
  for (let round = 0; round < rounds; round += 1) {
    const key = `client-${client}/key-${prng.int(3)}`;
    const body = `client ${client} round ${round} ${'x'.repeat(prng.int(2000))}`;
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    acknowledged.set(key, body);
    const back = await read(s3, bucket, key);
    expectThat(back === body, `client ${client} read ${JSON.stringify(back.slice(0, 30))} right after its acknowledged write of ${key} (${JSON.stringify(body.slice(0, 30))})`);
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `client-${client}/` }));
    expectThat((listed.Contents ?? []).some((item) => item.Key === key), `client ${client}'s listing right after writing ${key} does not show it`);
    const mine = `shared by client ${client} round ${round}`;
    shared.add(mine);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'shared', Body: mine }));
  }
}

export const overTimeChecks: Check[] = [
  {
    id: 's3.consistency.concurrent-clients',
    spec: 'S3 consistency',
    title: 'under four concurrent clients each acknowledged write reads and lists back at once, every key ends with its last acknowledged body, and a key all overwrite ends with one of their bodies',
    source: awsGuide('Welcome', 'ConsistencyModel'),
    async run(target) {
      const bucket = await target.makeBucket('concurrent');
      const s3s = Array.from({ length: clients }, () => target.clientFor(target.options.accessKey, target.options.secretKey));
      const acknowledged = Array.from({ length: clients }, () => new Map<string, string>());
      const shared = new Set<string>();
      await Promise.all(s3s.map((s3, client) => writer(target, s3, bucket, client, acknowledged[client]!, shared)));
      for (const [client, written] of acknowledged.entries()) {
        for (const [key, body] of written) {
          const back = await read(target.s3, bucket, key);
          expectThat(back === body, `after the run ${key} reads ${JSON.stringify(back.slice(0, 30))}, not client ${client}'s last acknowledged body`);
        }
      }
      const final = await read(target.s3, bucket, 'shared');
      expectThat(shared.has(final), `the key every client overwrote reads ${JSON.stringify(final.slice(0, 40))}, which no client wrote`);
      const listed = await target.s3.send(new ListObjectsV2Command({ Bucket: bucket }));
      const expected = new Set(['shared', ...acknowledged.flatMap((written) => [...written.keys()])]);
      const keys = (listed.Contents ?? []).map((item) => item.Key!);
      expectThat(keys.length === expected.size && keys.every((key) => expected.has(key)), `the listing after the run shows ${keys.length} keys, ${expected.size} were written`);
    },
  },
];
