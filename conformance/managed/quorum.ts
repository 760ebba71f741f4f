/**
 * Quorum formulas (SPEC "Limits", "Storage-class quorum rules"): for a drawn set width from 2 to
 * 16 and valid STANDARD and REDUCED_REDUNDANCY parities, drives of a one-node deployment go
 * offline one by one in a drawn order (the fault-control route), and at each count PUT, GET and
 * HEAD of both classes and a delete marker must succeed exactly when the drives left meet the
 * formula: read K, write K (K + 1 when K = M), delete markers N/2 + 1. The expected outcomes come
 * from SPEC.md, not from the implementation.
 */
import fc from 'fast-check';
import { CreateBucketCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutBucketVersioningCommand, PutObjectCommand, S3Client, type StorageClass } from '@aws-sdk/client-s3';
import { CheckFailure, errorOf, expectThat } from '../runner/check.js';
import { testCredentials } from '../harness/server-process.js';
import { createPrng } from '../../src/util/prng.js';
import { adminAt, withDeployment } from './deployment.js';
import type { PropertySuite } from './property.js';

/** SPEC "Limits": read K, write K (K + 1 when K = M), deletes and markers N/2 + 1; zero parity reads and writes need all N. */
export function quorums(width: number, parity: number): { read: number; write: number; delete: number } {
  const data = width - parity;
  return { read: data, write: data === parity ? data + 1 : data, delete: Math.floor(width / 2) + 1 };
}

export interface QuorumCase {
  width: number;
  standard: number;
  rrs: number;
  /** The order in which drives (by index in the fault route's list) go offline. */
  order: number[];
  sizeBytes: number;
}

const sizesBytes = [0, 1_000, 300_000, 1_500_000];

/** Every width 2..16 with every valid pair: each parity at most N/2, STANDARD ≥ RRS when both are non-zero. */
export const quorumCases: fc.Arbitrary<QuorumCase> = fc
  .integer({ min: 2, max: 16 })
  .chain((width) => fc.record({ width: fc.constant(width), standard: fc.integer({ min: 0, max: Math.floor(width / 2) }) }))
  .chain(({ width, standard }) =>
    fc.record({
      width: fc.constant(width),
      standard: fc.constant(standard),
      rrs: fc.integer({ min: 0, max: standard === 0 ? Math.floor(width / 2) : standard }),
      order: fc.shuffledSubarray([...Array(width).keys()], { minLength: width, maxLength: width }),
      sizeBytes: fc.constantFrom(...sizesBytes),
    }),
  );

/**
 * Every (width, parity) pair, 79 of them, in 43 cases: per width the parities 0..N/2, highest with
 * lowest (STANDARD ≥ RRS always holds), with seeded drive orders and sizes.
 */
export function quorumSweep(seed: number): QuorumCase[] {
  const prng = createPrng(seed);
  const cases: QuorumCase[] = [];
  for (let width = 2; width <= 16; width += 1) {
    const parities = Array.from({ length: Math.floor(width / 2) + 1 }, (_, index) => Math.floor(width / 2) - index);
    while (parities.length > 0) {
      const standard = parities.shift()!;
      const rrs = parities.pop() ?? standard;
      const order = [...Array(width).keys()];
      for (let index = order.length - 1; index > 0; index -= 1) {
        const other = prng.int(index + 1);
        [order[index], order[other]] = [order[other]!, order[index]!];
      }
      cases.push({ width, standard, rrs, order, sizeBytes: sizesBytes[cases.length % sizesBytes.length]! });
    }
  }
  return cases;
}

type Outcome = { name: string; status?: number };

function expectOutcome(what: string, outcome: Outcome, up: number, needed: number, code: string, context: string): void {
  const meets = up >= needed;
  // A HEAD answer has no body, so a client sees only the 503 status there.
  const ok = meets ? outcome.name === 'no error' : outcome.name === code || (what.startsWith('HEAD') && outcome.status === 503);
  if (!ok) throw new CheckFailure(`${what} with ${up} of ${context}, needs ${needed}: expected ${meets ? 'success' : code}, got ${outcome.name}${outcome.status ? ` (${outcome.status})` : ''}`);
}

async function checkQuorums(url: string, drawn: QuorumCase): Promise<void> {
  const s3 = new S3Client({ endpoint: url, region: 'us-east-1', forcePathStyle: true, credentials: testCredentials, maxAttempts: 1 });
  await s3.send(new CreateBucketCommand({ Bucket: 'quorum' }));
  await s3.send(new CreateBucketCommand({ Bucket: 'markers' }));
  await s3.send(new PutBucketVersioningCommand({ Bucket: 'markers', VersioningConfiguration: { Status: 'Enabled' } }));
  const body = Buffer.alloc(drawn.sizeBytes, 7);
  const classes: [StorageClass, number][] = [['STANDARD', drawn.standard], ['REDUCED_REDUNDANCY', drawn.rrs]];
  for (const [storageClass] of classes) await s3.send(new PutObjectCommand({ Bucket: 'quorum', Key: `kept-${storageClass}`, Body: body, StorageClass: storageClass }));
  await s3.send(new PutObjectCommand({ Bucket: 'markers', Key: 'm', Body: 'versioned' }));
  const drives = ((await adminAt(url, 'GET', '/svc/admin/v4/faults')).body.drives as { drive: string }[] | undefined)?.map((entry) => entry.drive) ?? [];
  expectThat(drives.length === drawn.width, `the fault route lists ${drives.length} drives, expected ${drawn.width}`);
  for (let offline = 0; offline <= drawn.width; offline += 1) {
    if (offline > 0) {
      const drive = drives[drawn.order[offline - 1]!]!;
      const answer = await adminAt(url, 'POST', '/svc/admin/v4/faults', `drive=${encodeURIComponent(drive)}`, JSON.stringify({ offline: true }));
      expectThat(answer.status === 200, `the fault route refused to take ${drive} offline: ${answer.status}`);
    }
    const up = drawn.width - offline;
    for (const [storageClass, parity] of classes) {
      const q = quorums(drawn.width, parity);
      const context = `${drawn.width} drives (${storageClass} EC:${parity}, ${drawn.sizeBytes} bytes)`;
      const put = await errorOf(s3.send(new PutObjectCommand({ Bucket: 'quorum', Key: `probe-${offline}`, Body: body, StorageClass: storageClass })));
      const get = await errorOf(s3.send(new GetObjectCommand({ Bucket: 'quorum', Key: `kept-${storageClass}` })).then(async (object) => expectThat(Buffer.from(await object.Body!.transformToByteArray()).equals(body), 'GET answered different bytes')));
      const head = await errorOf(s3.send(new HeadObjectCommand({ Bucket: 'quorum', Key: `kept-${storageClass}` })));
      expectOutcome(`PUT ${storageClass}`, put, up, q.write, 'ErasureWriteQuorum', context);
      expectOutcome(`GET ${storageClass}`, get, up, q.read, 'ErasureReadQuorum', context);
      expectOutcome(`HEAD ${storageClass}`, head, up, q.read, 'ErasureReadQuorum', context);
    }
    const marker = await errorOf(s3.send(new DeleteObjectCommand({ Bucket: 'markers', Key: 'm' })));
    expectOutcome('a delete marker', marker, up, Math.floor(drawn.width / 2) + 1, 'ErasureWriteQuorum', `${drawn.width} drives`);
  }
}

export const quorumSuite: PropertySuite<QuorumCase> = {
  id: 'managed.quorum-formulas',
  spec: 'Limits',
  title: 'for every width 2–16 and valid parity, PUT, GET, HEAD (STANDARD and RRS) and delete markers succeed exactly when the drives left meet the quorum formulas',
  defaultRuns: 4,
  cases: quorumCases,
  sweep: quorumSweep,
  describe: (drawn) => `width ${drawn.width}, STANDARD EC:${drawn.standard}, RRS EC:${drawn.rrs}, ${drawn.sizeBytes} bytes, drives offline in order ${drawn.order.join(',')}`,
  run: (drawn, launcher) =>
    withDeployment(
      launcher,
      { nodes: 1, poolPaths: [`/d{1...${drawn.width}}`], env: { SVC_FAULT_INJECTION: 'on', SVC_STORAGE_CLASS_STANDARD: `EC:${drawn.standard}`, SVC_STORAGE_CLASS_RRS: `EC:${drawn.rrs}` } },
      (deployment) => checkQuorums(deployment.urls[0]!, drawn),
    ),
};
