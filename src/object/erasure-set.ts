/**
 * One erasure set: N drives that store each object as K data + M parity shards. This facade
 * holds the set's configuration; the operations live in their own modules.
 */
import { isSvcError, SvcError } from '../errors/index.js';
import type { Drive } from '../drive/index.js';
import { putObject } from './put-object.js';
import { getObject, headObject, type ObjectReader } from './get-object.js';
import { deleteObject } from './delete-object.js';
import { updateVersionMetadata, type VersionUpdate } from './update-metadata.js';
import { listAnyKeys, listSet, type ListEntry } from './list-objects.js';
import { healObject, type HealObjectOptions, type HealObjectResult } from './heal-object.js';
import { placeObject, type ObjectPlacement } from './placement.js';
import { findUploadLeftovers, removeUploadLeftovers, type UploadLeftover } from './multipart.js';
import { majority, onlineSlots, requireQuorum, type SetConfig } from './set-context.js';
import type { WalkOptions } from './walk-keys.js';
import { dropRestoredCopy, restoreCopy, recordTransition, versionRecord, writeTransitionedCopy, type ExpectedVersion, type RestoredCopyEnd } from './transitioned.js';
import type { ObjectVersion, TransitionInfo } from '../format/xl-meta-types.js';
import type { DeleteObjectOptions, DeleteObjectResult, GetObjectOptions, ObjectInfo, PutObjectOptions } from './types.js';

export class ErasureSet {
  constructor(readonly config: SetConfig) {}

  get drives(): (Drive | undefined)[] {
    return this.config.drives;
  }

  putObject(bucket: string, key: string, body: AsyncIterable<Uint8Array>, options: PutObjectOptions): Promise<ObjectInfo> {
    return putObject(this.config, bucket, key, body, options);
  }

  getObject(bucket: string, key: string, options?: GetObjectOptions): Promise<ObjectReader> {
    return getObject(this.config, bucket, key, options);
  }

  headObject(bucket: string, key: string, versionId?: string): Promise<ObjectInfo> {
    return headObject(this.config, bucket, key, versionId);
  }

  updateVersionMetadata(bucket: string, key: string, versionId: string | undefined, update: VersionUpdate): Promise<ObjectInfo> {
    return updateVersionMetadata(this.config, bucket, key, versionId, update);
  }

  /** The stored record of one version; the caller holds the object's lock (transitions, data movement). */
  versionRecord(bucket: string, key: string, versionId: string): Promise<ObjectVersion> {
    return versionRecord(this.config, bucket, key, versionId);
  }

  /** Records a version's data as moved to its tier (transitioned.ts); the caller holds the write lock. */
  recordTransition(bucket: string, key: string, expected: ExpectedVersion, transition: TransitionInfo): Promise<ObjectInfo> {
    return recordTransition(this.config, bucket, key, expected, transition);
  }

  /** Writes a transitioned version's metadata alone into this set (data movement); the caller holds the write lock. */
  writeTransitionedCopy(bucket: string, key: string, version: ObjectVersion): Promise<void> {
    return writeTransitionedCopy(this.config, bucket, key, version);
  }

  /** RestoreObject: a transitioned version's bytes back on the drives until `expiryMs` (from `source` when given, else its tier); the caller holds the write lock. */
  restoreCopy(bucket: string, key: string, versionId: string | undefined, expiryMs: number, source?: AsyncIterable<Uint8Array>): Promise<{ restoredNow: boolean; info: ObjectInfo }> {
    return restoreCopy(this.config, bucket, key, versionId, expiryMs, source);
  }

  /** Ends a version's restored copy (its local bytes go); the caller holds the write lock. */
  dropRestoredCopy(bucket: string, key: string, versionId: string, nowMs: number): Promise<RestoredCopyEnd> {
    return dropRestoredCopy(this.config, bucket, key, versionId, nowMs);
  }

  deleteObject(bucket: string, key: string, options: DeleteObjectOptions): Promise<DeleteObjectResult> {
    return deleteObject(this.config, bucket, key, options);
  }

  healObject(bucket: string, key: string, options?: HealObjectOptions): Promise<HealObjectResult> {
    return healObject(this.config, bucket, key, options);
  }

  /** Upload directories a minority of drives kept after their upload ended (multipart.ts: heal looks twice, then removes them). */
  findUploadLeftovers(bucket: string): Promise<UploadLeftover[]> {
    return findUploadLeftovers(this.config, bucket);
  }

  removeUploadLeftovers(bucket: string, earlier: UploadLeftover[], dryRun: boolean): Promise<UploadLeftover[]> {
    return removeUploadLeftovers(this.config, bucket, earlier, dryRun);
  }

  /** Where a version's shards are, read-only (with `verify`, each shard's bitrot hashes checked). */
  placeObject(bucket: string, key: string, options: { versionId?: string; verify?: boolean } = {}): Promise<ObjectPlacement> {
    return placeObject(this.config, bucket, key, options);
  }

  /** Keys held by any online drive, without a vote (heal). */
  listAnyKeys(bucket: string, options: { prefix: string; startAfter?: string }): AsyncGenerator<string> {
    return listAnyKeys(this.config, bucket, options);
  }

  list(bucket: string, options: WalkOptions): AsyncGenerator<ListEntry> {
    return listSet(this.config, bucket, options);
  }

  /** Creates the bucket directory on every online drive; needs a majority. */
  async makeBucketDir(bucket: string): Promise<void> {
    const results = await this.onEveryDrive((drive) => drive.makeDir(bucket));
    requireQuorum(results.filter((ok) => ok).length, majority(this.config), 'write', { bucket, operation: 'make-bucket' });
  }

  /** Removes the (empty) bucket directory from every drive; BucketNotEmpty when any holds an object. */
  async deleteBucketDir(bucket: string, options: { force?: boolean } = {}): Promise<void> {
    if (!options.force && !(await this.isBucketEmpty(bucket))) throw new SvcError('BucketNotEmpty', undefined, { bucket });
    const results = await this.onEveryDrive(async (drive) => {
      try {
        await drive.deleteRecursive(bucket);
      } catch (error) {
        if (!isSvcError(error, 'FileNotFound')) throw error;
      }
    });
    requireQuorum(results.filter((ok) => ok).length, majority(this.config), 'write', { bucket, operation: 'delete-bucket' });
  }

  async isBucketEmpty(bucket: string): Promise<boolean> {
    for await (const entry of this.list(bucket, { prefix: '' })) {
      if (entry.kind === 'object') return false;
    }
    return true;
  }

  /** Does a majority of drives hold the bucket directory? */
  async bucketExists(bucket: string): Promise<boolean> {
    const results = await this.onEveryDrive(async (drive) => {
      const stat = await drive.stat(bucket);
      if (!stat.isDirectory) throw new SvcError('NotADirectory');
    });
    return results.filter((ok) => ok).length >= Math.min(majority(this.config), onlineSlots(this.config).length || 1);
  }

  private async onEveryDrive(action: (drive: Drive) => Promise<void>): Promise<boolean[]> {
    return Promise.all(
      this.config.drives.map(async (drive) => {
        if (!drive) return false;
        try {
          await action(drive);
          return true;
        } catch {
          return false;
        }
      }),
    );
  }
}
