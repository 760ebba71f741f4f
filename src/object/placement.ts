/**
 * Where one version of an object lives in its erasure set: its geometry, and for every slot of
 * the set the shard index it holds (data or parity) and the shard file of each part (or the
 * shard inline in that drive's xl.meta). With `verify`, every shard is read and its bitrot hashes
 * checked: each slot is then ok, missing, corrupt or offline. Read-only: it takes the object's
 * read lock and changes nothing, heals nothing.
 */
import { isSvcError, SvcError } from '../errors/index.js';
import type { ObjectVersion } from '../format/xl-meta-types.js';
import { framesSound, shardFileSizeBytes } from '../erasure/layout.js';
import { objectResource } from './locks.js';
import { readObjectMeta } from './meta-io.js';
import { partPathIn, xlMetaPathIn } from './paths.js';
import { resolveVersion, type DriveMetaAnswer } from './quorum.js';
import type { SetConfig } from './set-context.js';

export type ShardStatus = 'ok' | 'missing' | 'corrupt' | 'offline';

export interface ShardFile {
  part: number;
  /** Drive-relative path of the shard file; undefined when the shard is inline in xl.meta. */
  path?: string;
  /** The size the file must have (bitrot hashes included). */
  sizeBytes: number;
}

export interface SlotPlacement {
  slot: number;
  /** 1-based shard index this slot holds. */
  shardIndex: number;
  role: 'data' | 'parity';
  files: ShardFile[];
  /** With verify only. */
  status?: ShardStatus;
  /** With verify: why the slot is not ok. */
  problem?: string;
}

export interface ObjectPlacement {
  /** Drive-relative directory of the object. */
  dir: string;
  metaPath: string;
  version: { versionId: string; sizeBytes: number; etag: string; modTimeMs: number; storageClass: string };
  dataShards: number;
  parityShards: number;
  blockSizeBytes: number;
  inline: boolean;
  parts: { number: number; sizeBytes: number }[];
  slots: SlotPlacement[];
}

export async function placeObject(config: SetConfig, bucket: string, key: string, options: { versionId?: string; verify?: boolean } = {}): Promise<ObjectPlacement> {
  const release = await config.locker.acquire(objectResource(bucket, key), 'read');
  try {
    const { dir, answers } = await readObjectMeta(config, bucket, key);
    const { version, holders } = resolveVersion(answers, config.drives.length, options.versionId);
    if (version.deleteMarker || !version.erasure) {
      throw new SvcError(options.versionId === undefined ? 'NoSuchKey' : 'MethodNotAllowed', 'the version is a delete marker: it has no shards', { deleteMarker: true, versionId: version.versionId });
    }
    const erasure = version.erasure;
    const inline = version.dataDir === undefined;
    const slots = await Promise.all(
      erasure.distribution.map(async (shardIndex, slot): Promise<SlotPlacement> => {
        const files = version.parts.map((part) => ({
          part: part.number,
          ...(inline ? {} : { path: partPathIn(dir, version.dataDir!, part.number) }),
          sizeBytes: shardFileSizeBytes(part.sizeBytes, erasure.dataShards, erasure.blockSizeBytes),
        }));
        const placement: SlotPlacement = { slot, shardIndex, role: shardIndex <= erasure.dataShards ? 'data' : 'parity', files };
        if (!options.verify) return placement;
        return { ...placement, ...(await verifySlot(config, version, answers[slot]!, holders.get(slot), files)) };
      }),
    );
    return {
      dir,
      metaPath: xlMetaPathIn(dir),
      version: { versionId: version.versionId, sizeBytes: version.sizeBytes, etag: version.etag, modTimeMs: version.modTimeMs, storageClass: version.storageClass },
      dataShards: erasure.dataShards,
      parityShards: erasure.parityShards,
      blockSizeBytes: erasure.blockSizeBytes,
      inline,
      parts: version.parts.map((part) => ({ number: part.number, sizeBytes: part.sizeBytes })),
      slots,
    };
  } finally {
    release();
  }
}

type Verdict = { status: ShardStatus; problem?: string };

/** One slot's shard of the version: present with the right size and every hash sound? */
async function verifySlot(config: SetConfig, version: ObjectVersion, answer: DriveMetaAnswer, copy: ObjectVersion | undefined, files: ShardFile[]): Promise<Verdict> {
  const drive = config.drives[answer.slot];
  if (!drive) return { status: 'offline', problem: 'the drive is not connected' };
  if (answer.state === 'failed') return failedVerdict(answer.error, 'xl.meta');
  if (answer.state === 'missing') return { status: 'missing', problem: 'no xl.meta on this drive' };
  if (!copy) return { status: 'missing', problem: 'xl.meta on this drive lacks this version (or disagrees with the quorum)' };
  const erasure = version.erasure!;
  for (const [index, file] of files.entries()) {
    const part = version.parts[index]!;
    let bytes: Uint8Array;
    if (file.path === undefined) {
      if (!copy.inlineData) return { status: 'missing', problem: 'no inline shard in xl.meta' };
      bytes = copy.inlineData;
    } else {
      try {
        bytes = await drive.readFile(file.path);
      } catch (error) {
        return failedVerdict(error, file.path);
      }
    }
    if (bytes.length !== file.sizeBytes) return { status: 'corrupt', problem: `part ${part.number}: ${bytes.length} bytes, ${file.sizeBytes} expected` };
    if (!framesSound(bytes, part.sizeBytes, erasure.dataShards, erasure.blockSizeBytes)) return { status: 'corrupt', problem: `part ${part.number}: a bitrot hash does not match` };
  }
  return { status: 'ok' };
}

function failedVerdict(error: unknown, what: string): Verdict {
  if (isSvcError(error, 'DriveOffline')) return { status: 'offline', problem: `${what}: the drive is offline` };
  if (isSvcError(error, 'FileNotFound')) return { status: 'missing', problem: `${what} is missing` };
  return { status: 'corrupt', problem: `${what} cannot be read: ${error instanceof Error ? error.message : String(error)}` };
}
