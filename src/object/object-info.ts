import type { ObjectVersion } from '../format/xl-meta-types.js';
import type { ObjectInfo } from './types.js';

export function toObjectInfo(bucket: string, key: string, version: ObjectVersion, isLatest: boolean): ObjectInfo {
  return {
    bucket,
    key,
    versionId: version.versionId,
    isLatest,
    deleteMarker: version.deleteMarker,
    sizeBytes: version.sizeBytes,
    etag: version.etag,
    modTimeMs: version.modTimeMs,
    ...(version.contentType !== undefined ? { contentType: version.contentType } : {}),
    userMetadata: version.userMetadata,
    systemMetadata: version.systemMetadata,
    storageClass: version.storageClass,
    parts: version.parts,
    inline: !version.deleteMarker && version.dataDir === undefined && version.transition === undefined,
    dataShards: version.erasure?.dataShards ?? 0,
    parityShards: version.erasure?.parityShards ?? 0,
    ...(version.encryption ? encryptedSizes(version) : {}),
    ...(version.transition ? { transition: version.transition } : {}),
    ...(version.compression ? compressedSizes(version) : {}),
  };
}

/**
 * A compressed version as the client sees it: its size and parts (one, unless it was uploaded in
 * parts), the stored size and parts beside them.
 */
function compressedSizes(version: ObjectVersion): Pick<ObjectInfo, 'sizeBytes' | 'parts' | 'compression' | 'storedSizeBytes' | 'storedParts'> {
  const compression = version.compression!;
  const stored = new Map(version.parts.map((part) => [part.number, part]));
  const parts = compression.parts
    ? compression.parts.map((part) => {
        const { etag = '', checksum } = stored.get(part.number) ?? {};
        return { number: part.number, sizeBytes: part.plainSizeBytes, etag, ...(checksum !== undefined ? { checksum } : {}) };
      })
    : [{ number: 1, sizeBytes: compression.plainSizeBytes, etag: version.parts[0]?.etag ?? version.etag }];
  return { sizeBytes: compression.plainSizeBytes, parts, compression, storedSizeBytes: version.sizeBytes, storedParts: version.parts };
}

/** An encrypted version as the client sees it: its plaintext size and parts, the stored size beside them. */
function encryptedSizes(version: ObjectVersion): Pick<ObjectInfo, 'sizeBytes' | 'parts' | 'encryption' | 'storedSizeBytes' | 'storedParts'> {
  const encryption = version.encryption!;
  const stored = new Map(version.parts.map((part) => [part.number, part]));
  return {
    sizeBytes: encryption.plainSizeBytes,
    parts: encryption.plainParts.map((part) => {
      const { etag = '', checksum } = stored.get(part.number) ?? {};
      return { number: part.number, sizeBytes: part.sizeBytes, etag, ...(checksum !== undefined ? { checksum } : {}) };
    }),
    encryption,
    storedSizeBytes: version.sizeBytes,
    storedParts: version.parts,
  };
}
