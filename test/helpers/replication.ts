/** Bucket replication between two test servers: version lists compared, targets added, rules put, status read. */
import { expect } from 'vitest';
import { CreateBucketCommand, ListObjectVersionsCommand, PutBucketReplicationCommand, PutBucketVersioningCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor, testCredentials, type SvcProcess } from './server-process.js';
import { admin, type AdminAnswer } from './admin-client.js';
import { waitFor } from './poll.js';

/** Every version of a bucket: key, id, time, latest, and ETag and size or "marker", in key then newest-first order. */
export async function versionList(s3: S3Client, bucket: string): Promise<string[]> {
  const page = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket }));
  const lines = [
    ...(page.Versions ?? []).map((version) => ({ key: version.Key!, time: version.LastModified!.getTime(), line: `${version.Key} ${version.VersionId} ${version.LastModified!.toISOString()} ${version.IsLatest} ${version.ETag} ${version.Size}` })),
    ...(page.DeleteMarkers ?? []).map((marker) => ({ key: marker.Key!, time: marker.LastModified!.getTime(), line: `${marker.Key} ${marker.VersionId} ${marker.LastModified!.toISOString()} ${marker.IsLatest} marker` })),
  ];
  return lines.sort((x, y) => (x.key === y.key ? y.time - x.time : x.key < y.key ? -1 : 1)).map((entry) => entry.line);
}

/** Waits until the target's bucket lists exactly the source bucket's versions; returns them. */
export async function sameVersions(source: () => SvcProcess, sourceBucket: string, target: () => SvcProcess, targetBucket: string, timeoutMs = 30_000): Promise<string[]> {
  let listed: string[] = [];
  await waitFor(`${targetBucket} on the target holds every version of ${sourceBucket}`, async () => {
    listed = await versionList(s3ClientFor(source().url), sourceBucket);
    const copied = await versionList(s3ClientFor(target().url), targetBucket);
    return listed.length > 0 && JSON.stringify(listed) === JSON.stringify(copied);
  }, { timeoutMs, intervalMs: 100 });
  return listed;
}

export async function addTarget(on: SvcProcess, bucket: string, remote: SvcProcess, targetBucket: string, credentials = testCredentials): Promise<AdminAnswer> {
  const body = JSON.stringify({ bucket, endpoint: remote.url, targetBucket, accessKey: credentials.accessKeyId, secretKey: credentials.secretAccessKey });
  return admin(on.url, 'POST', '/svc/admin/v4/replication/target/add', '', { body });
}

/** One rule sending every key, delete markers included, to `arn:aws:s3:::<targetBucket>`. */
export async function replicate(on: SvcProcess, bucket: string, targetBucket: string, existing = false): Promise<void> {
  await s3ClientFor(on.url).send(new PutBucketReplicationCommand({
    Bucket: bucket,
    ReplicationConfiguration: {
      Role: '',
      Rules: [{ ID: 'all', Priority: 1, Status: 'Enabled', Filter: { Prefix: '' }, DeleteMarkerReplication: { Status: 'Enabled' }, ExistingObjectReplication: { Status: existing ? 'Enabled' : 'Disabled' }, Destination: { Bucket: `arn:aws:s3:::${targetBucket}` } }],
    },
  }));
}

export async function versionedBucket(on: SvcProcess, bucket: string, objectLock = false): Promise<void> {
  const s3 = s3ClientFor(on.url);
  await s3.send(new CreateBucketCommand({ Bucket: bucket, ...(objectLock ? { ObjectLockEnabledForBucket: true } : {}) }));
  if (!objectLock) await s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
}

/** The replication status route of a node for a bucket. */
export async function replicationStatus(on: SvcProcess, bucket: string): Promise<Record<string, any>> {
  const answer = await admin(on.url, 'GET', '/svc/admin/v4/replication/status', `bucket=${bucket}`);
  expect(answer.status).toBe(200);
  return answer.body;
}
