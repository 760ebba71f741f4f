/**
 * A lifecycle transition of one version, under the object's write lock (the scanner holds it):
 *
 * 1. its stored bytes (sealed when encrypted) are read from the drives and put on the tier as one
 *    object, whose key is drawn from the version's identity (a retry after a crash writes the
 *    same key, so no second copy is left behind);
 * 2. only then xl.meta is rewritten to name the tier's object, with write quorum;
 * 3. and only after that commit the local shards are freed.
 *
 * A failure in 1 or 2 leaves the version as it was (local data); the tier's object, if written,
 * is overwritten by the next try. A crash after 2 leaves the data on the tier, named.
 *
 * A version already on a tier moves on to the next one the same way (a rule's later Transition):
 * its bytes are read through from the first tier, and once xl.meta names the second, the first
 * tier's object is queued for deletion (the object layer releases it).
 */
import { createHash } from 'node:crypto';
import type { ObjectInfo, ObjectLayer } from '../../object/index.js';
import type { TierRegistry } from './tiers.js';
import { tiersNamed } from '../lifecycle-rules.js';

export type TransitionVersion = (bucket: string, key: string, version: ObjectInfo, tier: string) => Promise<void>;

export function transitionVersions(options: { objects: ObjectLayer; tiers: TierRegistry; deploymentId: string; nowMs: () => number; multipartThresholdBytes?: number }): TransitionVersion {
  const { objects, tiers } = options;
  return async (bucket, key, version, tier) => {
    // The tier is part of the identity: a version moved on from one tier to the next gets a key of its own there.
    const identity = [options.deploymentId, bucket, key, version.versionId, String(version.modTimeMs), tier].join('\0');
    const remoteKey = await tiers.remoteKeyFor(tier, createHash('sha256').update(identity).digest('hex'));
    const reader = await objects.getObject(bucket, key, { versionId: version.versionId, lockHeld: true, sealed: true });
    const { remoteVersionId } = await tiers.upload(tier, remoteKey, reader.body, version.storedSizeBytes ?? version.sizeBytes, options.multipartThresholdBytes);
    await objects.recordTransition(
      bucket,
      key,
      { versionId: version.versionId, modTimeMs: version.modTimeMs, etag: version.etag, ...(version.transition ? { fromTier: version.transition.tier } : {}) },
      { tier, remoteKey, ...(remoteVersionId ? { remoteVersionId } : {}), transitionedMs: options.nowMs() },
    );
  };
}

/** What still uses a tier: a lifecycle rule, or a transitioned version (every bucket is walked); undefined when nothing does. */
export async function tierUser(objects: ObjectLayer, tier: string): Promise<string | undefined> {
  const buckets = await objects.listBuckets();
  for (const bucket of buckets) {
    const rule = (bucket.lifecycle ?? []).find((candidate) => tiersNamed([candidate]).includes(tier));
    if (rule) return `lifecycle rule '${rule.id}' of bucket ${bucket.name}`;
  }
  for (const bucket of buckets) {
    for await (const entry of objects.list(bucket.name, { prefix: '' })) {
      if (entry.kind !== 'object') continue;
      const moved = entry.versions.find((version) => version.transition?.tier === tier);
      if (moved) return `version ${moved.versionId} of ${bucket.name}/${entry.key}`;
    }
  }
  return undefined;
}
