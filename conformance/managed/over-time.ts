/**
 * Behaviour over time (SPEC "Lifecycle", "Object lock", "Restart rules"): on a deployment whose
 * lifecycle clock runs two days ahead (SVC_LIFECYCLE_CLOCK_OFFSET, the injected clock svc offers
 * its test harness) and two pools, a drawn number of objects under a one-day expiration rule,
 * others outside it, and a version under drawn retention. After a restart the retention still
 * refuses the version's deletion, a lifecycle cycle expires exactly the objects the rule names, and
 * everything else reads back with its bytes; after the first pool is decommissioned (its objects
 * moved to the second), the same holds.
 */
import fc from 'fast-check';
import { CreateBucketCommand, DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutBucketLifecycleConfigurationCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { errorOf, expectThat } from '../runner/check.js';
import { testCredentials } from '../harness/server-process.js';
import { adminAt, withDeployment, type Deployment } from './deployment.js';
import type { PropertySuite } from './property.js';

export interface OverTimeCase {
  expiring: number;
  kept: number;
  mode: 'GOVERNANCE' | 'COMPLIANCE';
  /** Restart by SIGTERM or SIGKILL. */
  how: 'stop' | 'kill';
}

const s3At = (url: string) => new S3Client({ endpoint: url, region: 'us-east-1', forcePathStyle: true, credentials: testCredentials, maxAttempts: 1 });

async function text(s3: S3Client, bucket: string, key: string, versionId?: string): Promise<string> {
  return (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId }))).Body!.transformToString();
}

/** Starts a lifecycle cycle and waits (polling) until the scanner is idle again. */
async function lifecycleCycle(url: string): Promise<Record<string, any>> {
  const started = await adminAt(url, 'POST', '/svc/admin/v4/lifecycle/run');
  expectThat(started.status === 200, `POST /svc/admin/v4/lifecycle/run answered ${started.status} ${JSON.stringify(started.body).slice(0, 120)}`);
  for (let attempt = 0; attempt < 600; attempt += 1) {
    const status = await adminAt(url, 'GET', '/svc/admin/v4/lifecycle/status');
    if (status.body.running === false && status.body.last) return status.body.last as Record<string, any>;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the lifecycle cycle did not end within a minute');
}

/** Decommissions pool 0 and waits (polling) for it to complete. */
async function decommissionFirstPool(url: string): Promise<void> {
  const started = await adminAt(url, 'POST', '/svc/admin/v3/pools/decommission', 'pool=0&by-id=true');
  expectThat(started.status === 200, `decommission start answered ${started.status} ${JSON.stringify(started.body).slice(0, 120)}`);
  let state = 'none';
  for (const deadline = Date.now() + 90_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 250))) {
    state = (await adminAt(url, 'GET', '/svc/admin/v3/decommission/status', 'pool=0&by-id=true')).body.entries?.[0]?.state ?? 'none';
    if (state !== 'queued' && state !== 'active') break;
  }
  expectThat(state === 'completed', `the decommission of pool 0 ended '${state}', not completed`);
}

async function runCase(deployment: Deployment, drawn: OverTimeCase): Promise<void> {
  let s3 = s3At(deployment.urls[0]!);
  await s3.send(new CreateBucketCommand({ Bucket: 'expiring' }));
  const bodies = new Map<string, string>();
  for (let index = 0; index < drawn.expiring; index += 1) await s3.send(new PutObjectCommand({ Bucket: 'expiring', Key: `old/${index}`, Body: `old ${index}` }));
  for (let index = 0; index < drawn.kept; index += 1) {
    bodies.set(`keep/${index}`, `kept ${index}`);
    await s3.send(new PutObjectCommand({ Bucket: 'expiring', Key: `keep/${index}`, Body: `kept ${index}` }));
  }
  await s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: 'expiring', LifecycleConfiguration: { Rules: [{ ID: 'old', Status: 'Enabled', Filter: { Prefix: 'old/' }, Expiration: { Days: 1 } }] } }));
  await s3.send(new CreateBucketCommand({ Bucket: 'locked', ObjectLockEnabledForBucket: true }));
  const until = new Date(Math.floor((Date.now() + 3 * 86_400_000) / 1000) * 1000);
  const { VersionId } = await s3.send(new PutObjectCommand({ Bucket: 'locked', Key: 'held', Body: 'held body', ObjectLockMode: drawn.mode, ObjectLockRetainUntilDate: until }));

  await (drawn.how === 'stop' ? deployment.stop(0) : deployment.kill(0));
  await deployment.start(0);
  s3 = s3At(deployment.urls[0]!);

  const refused = await errorOf(s3.send(new DeleteObjectCommand({ Bucket: 'locked', Key: 'held', VersionId })));
  expectThat(refused.name === 'AccessDenied', `deleting a version under ${drawn.mode} retention after a restart answered ${refused.name}`);
  const last = await lifecycleCycle(deployment.urls[0]!);
  expectThat(last.errors === 0, `the lifecycle cycle reported ${last.errors} error(s)`);
  const listed = ((await s3.send(new ListObjectsV2Command({ Bucket: 'expiring' }))).Contents ?? []).map((item) => item.Key!).sort();
  expectThat(JSON.stringify(listed) === JSON.stringify([...bodies.keys()].sort()), `after a cycle two days ahead 'expiring' lists ${JSON.stringify(listed)}, expected only the keys outside the rule`);
  for (const [key, body] of bodies) expectThat((await text(s3, 'expiring', key)) === body, `${key} reads back different bytes`);
  expectThat((await text(s3, 'locked', 'held', VersionId)) === 'held body', 'the retained version reads back different bytes');
  const stillRefused = await errorOf(s3.send(new DeleteObjectCommand({ Bucket: 'locked', Key: 'held', VersionId })));
  expectThat(stillRefused.name === 'AccessDenied', `after the lifecycle cycle deleting the retained version answered ${stillRefused.name}`);

  await decommissionFirstPool(deployment.urls[0]!);
  const afterMove = await errorOf(s3.send(new DeleteObjectCommand({ Bucket: 'locked', Key: 'held', VersionId })));
  expectThat(afterMove.name === 'AccessDenied', `after a decommission moved it, deleting the retained version answered ${afterMove.name}`);
  expectThat((await text(s3, 'locked', 'held', VersionId)) === 'held body', 'the retained version reads back different bytes after the decommission');
  for (const [key, body] of bodies) expectThat((await text(s3, 'expiring', key)) === body, `${key} reads back different bytes after the decommission`);
}

export const overTimeSuite: PropertySuite<OverTimeCase> = {
  id: 'managed.over-time',
  spec: 'Lifecycle and object lock over time',
  title: 'with the lifecycle clock two days ahead a cycle expires exactly the objects a one-day rule names, and after a restart (SIGTERM or SIGKILL) and a decommission retention still refuses the deletion of a locked version',
  defaultRuns: 1,
  cases: fc.record({ expiring: fc.integer({ min: 1, max: 4 }), kept: fc.integer({ min: 1, max: 3 }), mode: fc.constantFrom('GOVERNANCE' as const, 'COMPLIANCE' as const), how: fc.constantFrom('stop' as const, 'kill' as const) }),
  describe: (drawn) => `${drawn.expiring} expiring and ${drawn.kept} kept object(s), ${drawn.mode} retention, restart by ${drawn.how === 'stop' ? 'SIGTERM' : 'SIGKILL'}`,
  run: (drawn, launcher) => withDeployment(launcher, { nodes: 1, poolPaths: ['/p0/d{1...4}', '/p1/d{1...4}'], env: { SVC_LIFECYCLE_CLOCK_OFFSET: '2d' } }, (deployment) => runCase(deployment, drawn)),
};
