/**
 * `xl.meta` byte encoding (docs/formats.md):
 *
 *   magic "XLSV" | u16 version (1 or 2) | u16 flags (0) | u32 metadata length | metadata (UTF-8 JSON)
 *   | u32 inline count | per inline blob: u16 id length, version id, u32 length, bytes
 *   | u32 CRC-32 of everything before it
 *
 * All integers are big-endian. Inline shard bytes are stored raw, never in the JSON. A decoder
 * rejects an unknown magic or version (UnsupportedFormat) and anything malformed (CorruptFormat).
 * Version 2 is written when a version is compressed, so that a build which predates compression
 * (and would ignore the `compression` field, serving the stored blocks as the object) refuses the
 * file instead; every other file stays version 1. Both decode alike.
 */
import { crc32 } from 'node:zlib';
import { SvcError } from '../errors/index.js';
import type { EncryptionInfo, ErasureInfo, ObjectPart, ObjectVersion, TransitionInfo, XlMeta } from './xl-meta-types.js';
import { canonicalCompression, validateCompression } from './xl-meta-compression.js';

export const xlMetaMagic = 'XLSV';
export const xlMetaVersion = 1;
/** The format number of a file that holds a compressed version. */
export const xlMetaCompressedVersion = 2;
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function encodeXlMeta(meta: XlMeta): Uint8Array {
  const versions = meta.versions.map(canonicalVersion);
  const json = Buffer.from(JSON.stringify({ versions }), 'utf8');
  const inline = meta.versions.filter((version) => version.inlineData !== undefined);
  const inlineBytes = inline.reduce((sum, version) => sum + 2 + Buffer.byteLength(version.versionId) + 4 + version.inlineData!.length, 0);
  const out = Buffer.allocUnsafe(4 + 2 + 2 + 4 + json.length + 4 + inlineBytes + 4);
  let offset = out.write(xlMetaMagic, 0, 'latin1');
  offset = out.writeUInt16BE(meta.versions.some((version) => version.compression !== undefined) ? xlMetaCompressedVersion : xlMetaVersion, offset);
  offset = out.writeUInt16BE(0, offset);
  offset = out.writeUInt32BE(json.length, offset);
  offset += json.copy(out, offset);
  offset = out.writeUInt32BE(inline.length, offset);
  for (const version of inline) {
    const id = Buffer.from(version.versionId, 'utf8');
    offset = out.writeUInt16BE(id.length, offset);
    offset += id.copy(out, offset);
    offset = out.writeUInt32BE(version.inlineData!.length, offset);
    out.set(version.inlineData!, offset);
    offset += version.inlineData!.length;
  }
  out.writeUInt32BE(crc32(out.subarray(0, offset)), offset);
  return out;
}

export function decodeXlMeta(bytes: Uint8Array): XlMeta {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.length < 8 || buffer.toString('latin1', 0, 4) !== xlMetaMagic) {
    throw new SvcError('UnsupportedFormat', 'xl.meta: unknown magic');
  }
  const version = buffer.readUInt16BE(4);
  if (version !== xlMetaVersion && version !== xlMetaCompressedVersion) throw new SvcError('UnsupportedFormat', `xl.meta: unsupported version ${version}`);
  if (buffer.length < 16) corrupt('truncated header');
  const body = buffer.length - 4;
  if (crc32(buffer.subarray(0, body)) !== buffer.readUInt32BE(body)) corrupt('checksum mismatch');
  const reader = new Reader(buffer.subarray(0, body), 8);
  const json = reader.bytes(reader.u32());
  let parsed: unknown;
  try {
    parsed = JSON.parse(json.toString('utf8'));
  } catch {
    corrupt('metadata is not JSON');
  }
  const versions = validateVersions(parsed);
  const inlineCount = reader.u32();
  for (let index = 0; index < inlineCount; index += 1) {
    const id = reader.bytes(reader.u16()).toString('utf8');
    const data = reader.bytes(reader.u32());
    const owner = versions.find((candidate) => candidate.versionId === id);
    if (!owner || owner.inlineData) corrupt(`inline data for unknown version ${id}`);
    owner.inlineData = new Uint8Array(data);
  }
  if (!reader.atEnd()) corrupt('trailing bytes');
  return { versions };
}

class Reader {
  constructor(private readonly buffer: Buffer, private offset: number) {}
  u16(): number {
    this.need(2);
    const value = this.buffer.readUInt16BE(this.offset);
    this.offset += 2;
    return value;
  }
  u32(): number {
    this.need(4);
    const value = this.buffer.readUInt32BE(this.offset);
    this.offset += 4;
    return value;
  }
  bytes(length: number): Buffer {
    this.need(length);
    const value = this.buffer.subarray(this.offset, this.offset + length);
    this.offset += length;
    return value;
  }
  atEnd(): boolean {
    return this.offset === this.buffer.length;
  }
  private need(length: number): void {
    if (this.offset + length > this.buffer.length) corrupt('truncated');
  }
}

function corrupt(reason: string): never {
  throw new SvcError('CorruptFormat', `xl.meta: ${reason}`);
}

// --- validation ---------------------------------------------------------------------------

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const isStringMap = (value: unknown): value is Record<string, string> => isObject(value) && Object.values(value).every((entry) => typeof entry === 'string');

function validateVersions(value: unknown): ObjectVersion[] {
  if (!isObject(value) || !Array.isArray(value.versions)) corrupt('versions missing');
  const versions = value.versions.map(validateVersion);
  if (new Set(versions.map((version) => version.versionId)).size !== versions.length) corrupt('duplicate version id');
  return versions;
}

function validateVersion(value: unknown, index: number): ObjectVersion {
  const where = `versions[${index}]`;
  if (!isObject(value)) corrupt(`${where} is not an object`);
  const v = value;
  if (typeof v.versionId !== 'string' || (v.versionId !== 'null' && !uuidPattern.test(v.versionId))) corrupt(`${where}.versionId`);
  if (!isCount(v.modTimeMs)) corrupt(`${where}.modTimeMs`);
  if (typeof v.deleteMarker !== 'boolean') corrupt(`${where}.deleteMarker`);
  if (!isCount(v.sizeBytes)) corrupt(`${where}.sizeBytes`);
  if (typeof v.etag !== 'string') corrupt(`${where}.etag`);
  if (v.contentType !== undefined && typeof v.contentType !== 'string') corrupt(`${where}.contentType`);
  if (!isStringMap(v.userMetadata) || !isStringMap(v.systemMetadata)) corrupt(`${where} metadata maps`);
  if (v.storageClass !== 'STANDARD' && v.storageClass !== 'REDUCED_REDUNDANCY') corrupt(`${where}.storageClass`);
  if (v.dataDir !== undefined && (typeof v.dataDir !== 'string' || !uuidPattern.test(v.dataDir))) corrupt(`${where}.dataDir`);
  if (v.deleteMarker === (v.erasure !== undefined)) corrupt(`${where}: erasure info must be present exactly when not a delete marker`);
  const erasure = v.erasure === undefined ? undefined : validateErasure(v.erasure, where);
  const parts = validateParts(v.parts, where);
  const encryption = v.encryption === undefined ? undefined : validateEncryption(v.encryption, where);
  const compression = v.compression === undefined ? undefined : validateCompression(v.compression, where, encryption?.plainSizeBytes ?? v.sizeBytes);
  const transition = v.transition === undefined ? undefined : validateTransition(v.transition, where);
  if (transition && v.deleteMarker) corrupt(`${where}: a delete marker has no transition`);
  const version: ObjectVersion = {
    versionId: v.versionId,
    modTimeMs: v.modTimeMs,
    deleteMarker: v.deleteMarker,
    sizeBytes: v.sizeBytes,
    etag: v.etag,
    ...(v.contentType !== undefined ? { contentType: v.contentType as string } : {}),
    userMetadata: v.userMetadata,
    systemMetadata: v.systemMetadata,
    storageClass: v.storageClass,
    ...(v.dataDir !== undefined ? { dataDir: v.dataDir as string } : {}),
    ...(erasure ? { erasure } : {}),
    parts,
    ...(encryption ? { encryption } : {}),
    ...(compression ? { compression } : {}),
    ...(transition ? { transition } : {}),
  };
  return version;
}

const tierNamePattern = /^[A-Z0-9][A-Z0-9_-]{0,63}$/;

/** The `transition` field: every member checked, anything unknown refused. */
function validateTransition(value: unknown, where: string): TransitionInfo {
  const at = `${where}.transition`;
  if (!isObject(value)) corrupt(at);
  const t = value;
  const known = new Set(['tier', 'remoteKey', 'remoteVersionId', 'transitionedMs', 'restoreExpiryMs']);
  for (const name of Object.keys(t)) if (!known.has(name)) corrupt(`${at}.${name} is unknown`);
  if (typeof t.tier !== 'string' || !tierNamePattern.test(t.tier)) corrupt(`${at}.tier`);
  if (typeof t.remoteKey !== 'string' || t.remoteKey === '' || t.remoteKey.length > 1024) corrupt(`${at}.remoteKey`);
  if (t.remoteVersionId !== undefined && (typeof t.remoteVersionId !== 'string' || t.remoteVersionId === '')) corrupt(`${at}.remoteVersionId`);
  if (!isCount(t.transitionedMs)) corrupt(`${at}.transitionedMs`);
  if (t.restoreExpiryMs !== undefined && !isCount(t.restoreExpiryMs)) corrupt(`${at}.restoreExpiryMs`);
  return canonicalTransition(t as unknown as TransitionInfo);
}

function canonicalTransition(t: TransitionInfo): TransitionInfo {
  return {
    tier: t.tier,
    remoteKey: t.remoteKey,
    ...(t.remoteVersionId !== undefined ? { remoteVersionId: t.remoteVersionId } : {}),
    transitionedMs: t.transitionedMs,
    ...(t.restoreExpiryMs !== undefined ? { restoreExpiryMs: t.restoreExpiryMs } : {}),
  };
}

const encryptionKinds = new Set(['SSE-S3', 'SSE-KMS', 'SSE-C']);
const base64Pattern = /^[A-Za-z0-9+/]+={0,2}$/;

/** The `encryption` field: every member checked, anything unknown refused (never guessed). */
function validateEncryption(value: unknown, where: string): EncryptionInfo {
  const at = `${where}.encryption`;
  if (!isObject(value)) corrupt(at);
  const e = value;
  const known = new Set(['kind', 'cipher', 'keyId', 'sealedKey', 'context', 'customerKeyHmac', 'plainSizeBytes', 'plainParts']);
  for (const name of Object.keys(e)) if (!known.has(name)) corrupt(`${at}.${name} is unknown`);
  if (typeof e.kind !== 'string' || !encryptionKinds.has(e.kind)) corrupt(`${at}.kind`);
  if (e.cipher !== 'aes-256-gcm-64k-v1') throw new SvcError('UnsupportedFormat', `xl.meta: ${at}.cipher ${String(e.cipher)} is not known to this build`);
  if (typeof e.keyId !== 'string') corrupt(`${at}.keyId`);
  if (typeof e.sealedKey !== 'string' || !base64Pattern.test(e.sealedKey)) corrupt(`${at}.sealedKey`);
  if (e.context !== undefined && !isStringMap(e.context)) corrupt(`${at}.context`);
  if (e.customerKeyHmac !== undefined && (typeof e.customerKeyHmac !== 'string' || !base64Pattern.test(e.customerKeyHmac))) corrupt(`${at}.customerKeyHmac`);
  if ((e.kind === 'SSE-C') !== (e.customerKeyHmac !== undefined)) corrupt(`${at}: customerKeyHmac must be present exactly for SSE-C`);
  if (!isCount(e.plainSizeBytes)) corrupt(`${at}.plainSizeBytes`);
  if (!Array.isArray(e.plainParts) || e.plainParts.length === 0) corrupt(`${at}.plainParts`);
  let previous = 0;
  let total = 0;
  const plainParts = e.plainParts.map((part, index) => {
    if (!isObject(part) || !isCount(part.number) || part.number <= previous || !isCount(part.sizeBytes)) corrupt(`${at}.plainParts[${index}]`);
    if (part.keySalt !== undefined && (typeof part.keySalt !== 'string' || !base64Pattern.test(part.keySalt) || Buffer.from(part.keySalt, 'base64').length !== 16)) corrupt(`${at}.plainParts[${index}].keySalt`);
    for (const name of Object.keys(part)) if (name !== 'number' && name !== 'sizeBytes' && name !== 'keySalt') corrupt(`${at}.plainParts[${index}].${name} is unknown`);
    previous = part.number;
    total += part.sizeBytes;
    return { number: part.number, sizeBytes: part.sizeBytes, ...(part.keySalt !== undefined ? { keySalt: part.keySalt as string } : {}) };
  });
  if (total !== e.plainSizeBytes) corrupt(`${at}: the parts do not add up to plainSizeBytes`);
  return {
    kind: e.kind as EncryptionInfo['kind'],
    cipher: 'aes-256-gcm-64k-v1',
    keyId: e.keyId,
    sealedKey: e.sealedKey,
    ...(e.context !== undefined ? { context: e.context } : {}),
    ...(e.customerKeyHmac !== undefined ? { customerKeyHmac: e.customerKeyHmac as string } : {}),
    plainSizeBytes: e.plainSizeBytes,
    plainParts,
  };
}

function canonicalEncryption(e: EncryptionInfo): EncryptionInfo {
  return {
    kind: e.kind,
    cipher: e.cipher,
    keyId: e.keyId,
    sealedKey: e.sealedKey,
    ...(e.context !== undefined ? { context: sortedMap(e.context) } : {}),
    ...(e.customerKeyHmac !== undefined ? { customerKeyHmac: e.customerKeyHmac } : {}),
    plainSizeBytes: e.plainSizeBytes,
    plainParts: e.plainParts.map((part) => ({ number: part.number, sizeBytes: part.sizeBytes, ...(part.keySalt !== undefined ? { keySalt: part.keySalt } : {}) })),
  };
}

function validateErasure(value: unknown, where: string): ErasureInfo {
  if (!isObject(value)) corrupt(`${where}.erasure`);
  const e = value;
  if (typeof e.codec !== 'string' || e.codec === '') corrupt(`${where}.erasure.codec`);
  if (!isCount(e.dataShards) || e.dataShards < 1) corrupt(`${where}.erasure.dataShards`);
  if (!isCount(e.parityShards) || e.parityShards > e.dataShards) corrupt(`${where}.erasure.parityShards`);
  const n = e.dataShards + e.parityShards;
  if (n > 256) corrupt(`${where}.erasure: more than 256 shards`);
  if (!isCount(e.blockSizeBytes) || e.blockSizeBytes < 1) corrupt(`${where}.erasure.blockSizeBytes`);
  if (!isCount(e.index) || e.index < 1 || e.index > n) corrupt(`${where}.erasure.index`);
  const distribution = e.distribution;
  const isPermutation =
    Array.isArray(distribution) &&
    distribution.length === n &&
    [...distribution].sort((a, b) => Number(a) - Number(b)).every((entry, position) => entry === position + 1);
  if (!isPermutation) corrupt(`${where}.erasure.distribution is not a permutation of 1..${n}`);
  if (e.checksumAlgorithm !== 'xxh64') corrupt(`${where}.erasure.checksumAlgorithm`);
  return {
    codec: e.codec,
    dataShards: e.dataShards,
    parityShards: e.parityShards,
    blockSizeBytes: e.blockSizeBytes,
    index: e.index,
    distribution: distribution as number[],
    checksumAlgorithm: 'xxh64',
  };
}

function validateParts(value: unknown, where: string): ObjectPart[] {
  if (!Array.isArray(value)) corrupt(`${where}.parts`);
  let previous = 0;
  return value.map((part, index) => {
    if (!isObject(part) || !isCount(part.number) || part.number <= previous || !isCount(part.sizeBytes) || typeof part.etag !== 'string') {
      corrupt(`${where}.parts[${index}]`);
    }
    previous = part.number;
    if (part.checksum !== undefined && typeof part.checksum !== 'string') corrupt(`${where}.parts[${index}].checksum`);
    return { number: part.number, sizeBytes: part.sizeBytes, etag: part.etag, ...(part.checksum !== undefined ? { checksum: part.checksum } : {}) };
  });
}

/** A version's JSON fields in one fixed order, so equal metadata always encodes to equal bytes. */
function canonicalVersion(version: ObjectVersion): Omit<ObjectVersion, 'inlineData'> {
  const erasure = version.erasure;
  return {
    versionId: version.versionId,
    modTimeMs: version.modTimeMs,
    deleteMarker: version.deleteMarker,
    sizeBytes: version.sizeBytes,
    etag: version.etag,
    ...(version.contentType !== undefined ? { contentType: version.contentType } : {}),
    userMetadata: sortedMap(version.userMetadata),
    systemMetadata: sortedMap(version.systemMetadata),
    storageClass: version.storageClass,
    ...(version.dataDir !== undefined ? { dataDir: version.dataDir } : {}),
    ...(erasure
      ? {
          erasure: {
            codec: erasure.codec,
            dataShards: erasure.dataShards,
            parityShards: erasure.parityShards,
            blockSizeBytes: erasure.blockSizeBytes,
            index: erasure.index,
            distribution: erasure.distribution,
            checksumAlgorithm: erasure.checksumAlgorithm,
          },
        }
      : {}),
    parts: version.parts.map((part) => ({ number: part.number, sizeBytes: part.sizeBytes, etag: part.etag, ...(part.checksum !== undefined ? { checksum: part.checksum } : {}) })),
    ...(version.encryption ? { encryption: canonicalEncryption(version.encryption) } : {}),
    ...(version.compression ? { compression: canonicalCompression(version.compression) } : {}),
    ...(version.transition ? { transition: canonicalTransition(version.transition) } : {}),
  };
}

function sortedMap(map: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

// --- version list helpers -------------------------------------------------------------------

function newerFirst(a: ObjectVersion, b: ObjectVersion): number {
  return b.modTimeMs - a.modTimeMs || (a.versionId < b.versionId ? 1 : a.versionId > b.versionId ? -1 : 0);
}

export function latestVersion(meta: XlMeta): ObjectVersion | undefined {
  return meta.versions[0];
}

export function findVersion(meta: XlMeta, versionId: string): ObjectVersion | undefined {
  return meta.versions.find((version) => version.versionId === versionId);
}

/** Returns a new XlMeta with `version` added, replacing any version with the same id. */
export function upsertVersion(meta: XlMeta, version: ObjectVersion): XlMeta {
  const versions = meta.versions.filter((candidate) => candidate.versionId !== version.versionId);
  versions.push(version);
  versions.sort(newerFirst);
  return { versions };
}

export function removeVersion(meta: XlMeta, versionId: string): XlMeta {
  return { versions: meta.versions.filter((version) => version.versionId !== versionId) };
}

/**
 * What drives must agree on for a version to count as the same: identity, content and geometry
 * (not the per-drive shard index or inline bytes).
 */
export function xlMetaSignature(version: ObjectVersion): string {
  const erasure = version.erasure;
  return [
    version.versionId,
    version.modTimeMs,
    version.deleteMarker ? 'dm' : 'obj',
    version.sizeBytes,
    version.etag,
    version.dataDir ?? '-',
    erasure ? `${erasure.codec}:${erasure.dataShards}+${erasure.parityShards}:${erasure.blockSizeBytes}:${erasure.distribution.join('.')}` : '-',
    version.parts.map((part) => `${part.number}/${part.sizeBytes}/${part.etag}`).join(','),
    ...(version.encryption ? [`sse:${version.encryption.kind}:${version.encryption.keyId}:${version.encryption.sealedKey}`] : []),
    ...(version.compression ? [`zip:${version.compression.algorithm}:${version.compression.plainSizeBytes}:${version.compression.storedSizeBytes}`] : []),
    ...(version.transition ? [`tier:${version.transition.tier}:${version.transition.remoteKey}:${version.transition.restoreExpiryMs ?? '-'}`] : []),
  ].join('|');
}
