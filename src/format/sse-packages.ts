/**
 * The encrypted-object package format (docs/formats.md, "Encrypted data packages").
 *
 * Plaintext is cut into packages of `packagePlainBytes` (64 KiB; the last package of a part may
 * be shorter, and an empty part has one empty package). Each package is sealed on its own with
 * AES-256-GCM under the object version's data key:
 *
 *   package = ciphertext (same length as its plaintext) | 16-byte GCM tag
 *   nonce   = nonce base (12 random bytes per object version)
 *             XOR (u32 part number | u64 package index), big-endian, 4 + 8 bytes
 *   AAD     = "svc-sse-1" | u32 part number | u64 package index | u8 final flag (1 on the part's last package)
 *
 * The stored bytes of an object are its parts' package sequences one after another. Any plaintext
 * byte range maps to a run of whole packages (`cipherRangeOf`), so a range is decrypted without
 * reading from the start. Truncating, reordering, swapping packages between parts or objects, or
 * flipping a byte fails authentication: nothing unauthenticated is ever returned.
 *
 * The stream transforms seal and open packages through WebCrypto, whose AES-GCM runs on libuv's
 * thread pool: up to limits.ssePackagesInFlight packages at once, handed on in order, so the
 * cipher's work leaves the event loop and overlaps the rest of a request. The bytes are the same
 * as `sealPackage` makes on the event loop.
 *
 * Pure code: bytes in, bytes out (the stream transforms take and give async iterables).
 */
import { createCipheriv, createDecipheriv, createHmac, webcrypto } from 'node:crypto';
import { SvcError } from '../errors/index.js';
import { limits } from '../util/limits.js';

export const packagePlainBytes = 64 * 1024;
export const packageTagBytes = 16;
export const packageSealedBytes = packagePlainBytes + packageTagBytes;
export const dataKeyBytes = 32;
export const nonceBaseBytes = 12;
const aadLabel = Buffer.from('svc-sse-1', 'latin1');
const cipherName = 'aes-256-gcm';

/** The secrets of one object version's packages. */
export interface PackageKey {
  /** 32-byte AES-256 data key. */
  dataKey: Uint8Array;
  /** 12 random bytes, unique per object version. */
  nonceBase: Uint8Array;
}

export const partKeySaltBytes = 16;

/**
 * The package key of one uploaded part of a multipart object: its data key is
 * HMAC-SHA256(version data key, "svc-sse-part" | salt), its nonce base the version's. Every upload
 * of a part draws a new salt, so a part sent again under the same number is sealed under another
 * key and no (key, nonce) pair ever seals two plaintexts.
 */
export function partPackageKey(key: PackageKey, salt: Uint8Array): PackageKey {
  if (salt.length !== partKeySaltBytes) throw new SvcError('InternalError', 'a part key salt is 16 bytes');
  const dataKey = createHmac('sha256', key.dataKey).update('svc-sse-part').update(salt).digest();
  return { dataKey, nonceBase: key.nonceBase };
}

/** Number of packages of a part of `plainSizeBytes` (at least one). */
export function packageCount(plainSizeBytes: number): number {
  return Math.max(1, Math.ceil(plainSizeBytes / packagePlainBytes));
}

/** Stored (sealed) size of a part of `plainSizeBytes`. */
export function sealedSizeBytes(plainSizeBytes: number): number {
  return plainSizeBytes + packageCount(plainSizeBytes) * packageTagBytes;
}

/** Plaintext size of a sealed part of `sealedBytes`, or undefined when no plaintext size seals to it. */
export function plainSizeOf(sealedBytes: number): number | undefined {
  const packages = Math.max(1, Math.ceil(sealedBytes / packageSealedBytes));
  const plain = sealedBytes - packages * packageTagBytes;
  return plain >= 0 && sealedSizeBytes(plain) === sealedBytes ? plain : undefined;
}

function nonceFor(key: PackageKey, partNumber: number, index: number): Buffer {
  const nonce = Buffer.from(key.nonceBase);
  const counter = Buffer.alloc(nonceBaseBytes);
  counter.writeUInt32BE(partNumber, 0);
  counter.writeBigUInt64BE(BigInt(index), 4);
  for (let position = 0; position < nonceBaseBytes; position += 1) nonce[position]! ^= counter[position]!;
  return nonce;
}

function aadFor(partNumber: number, index: number, final: boolean): Buffer {
  const aad = Buffer.alloc(aadLabel.length + 4 + 8 + 1);
  aadLabel.copy(aad, 0);
  aad.writeUInt32BE(partNumber, aadLabel.length);
  aad.writeBigUInt64BE(BigInt(index), aadLabel.length + 4);
  aad[aad.length - 1] = final ? 1 : 0;
  return aad;
}

function checkKey(key: PackageKey): void {
  if (key.dataKey.length !== dataKeyBytes || key.nonceBase.length !== nonceBaseBytes) {
    throw new SvcError('InternalError', 'encryption key material of the wrong length');
  }
}

/** Where a package sits: its part, its index in the part, and whether it is the part's last. */
export interface PackagePosition {
  partNumber: number;
  index: number;
  final: boolean;
}

export function sealPackage(key: PackageKey, at: PackagePosition, plain: Uint8Array): Buffer {
  const cipher = createCipheriv(cipherName, key.dataKey, nonceFor(key, at.partNumber, at.index), { authTagLength: packageTagBytes });
  cipher.setAAD(aadFor(at.partNumber, at.index, at.final));
  return Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
}

/** The plaintext of one sealed package; ObjectTampered when it does not authenticate. */
export function openPackage(key: PackageKey, at: PackagePosition, sealed: Uint8Array): Buffer {
  if (sealed.length < packageTagBytes || sealed.length > packageSealedBytes) tampered(at);
  const body = sealed.subarray(0, sealed.length - packageTagBytes);
  const decipher = createDecipheriv(cipherName, key.dataKey, nonceFor(key, at.partNumber, at.index), { authTagLength: packageTagBytes });
  decipher.setAAD(aadFor(at.partNumber, at.index, at.final));
  decipher.setAuthTag(sealed.subarray(sealed.length - packageTagBytes));
  try {
    const plain = decipher.update(body);
    decipher.final(); // GCM gives no more bytes here: it only checks the tag
    return plain;
  } catch {
    tampered(at);
  }
}

const subtle = webcrypto.subtle;
type CryptoKey = webcrypto.CryptoKey;

/** A package key's data key as a WebCrypto key (imported once per key, for every package it seals or opens). */
const importedKeys = new WeakMap<PackageKey, Promise<CryptoKey>>();
function cryptoKeyOf(key: PackageKey): Promise<CryptoKey> {
  let imported = importedKeys.get(key);
  if (!imported) {
    imported = subtle.importKey('raw', key.dataKey, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
    importedKeys.set(key, imported);
  }
  return imported;
}

function gcmParameters(key: PackageKey, at: PackagePosition): webcrypto.AesGcmParams {
  return { name: 'AES-GCM', iv: nonceFor(key, at.partNumber, at.index), additionalData: aadFor(at.partNumber, at.index, at.final), tagLength: packageTagBytes * 8 };
}

/**
 * `sealPackage` on the thread pool. WebCrypto copies `plain` before this returns, so the caller
 * may reuse its memory at once.
 */
async function sealPackageOffLoop(cryptoKey: CryptoKey, key: PackageKey, at: PackagePosition, plain: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await subtle.encrypt(gcmParameters(key, at), cryptoKey, plain));
}

/** `openPackage` on the thread pool; `sealed` is copied before this returns, as above. */
async function openPackageOffLoop(cryptoKey: CryptoKey, key: PackageKey, at: PackagePosition, sealed: Uint8Array): Promise<Uint8Array> {
  if (sealed.length < packageTagBytes || sealed.length > packageSealedBytes) tampered(at);
  try {
    return new Uint8Array(await subtle.decrypt(gcmParameters(key, at), cryptoKey, sealed));
  } catch {
    tampered(at);
  }
}

/** Work started in order and handed on in order; a failure is observed when its turn comes. */
class InOrder<T> {
  private readonly queue: Promise<T>[] = [];

  get length(): number {
    return this.queue.length;
  }

  push(work: Promise<T>): void {
    work.catch(() => undefined); // observed when shifted
    this.queue.push(work);
  }

  shift(): Promise<T> {
    return this.queue.shift()!;
  }
}

function tampered(at: PackagePosition): never {
  throw new SvcError('ObjectTampered', undefined, { partNumber: at.partNumber, packageIndex: at.index });
}

/**
 * Seals a stream of plaintext as one part's package sequence. A package is sealed as soon as it
 * is full and known not to be the last (the transform holds one full package back to know which
 * is last); up to limits.ssePackagesInFlight are sealed at once, and the sealed packages are
 * handed on in order. Two package buffers are reused throughout (the sealer copies what it takes).
 */
export async function* sealStream(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, key: PackageKey, partNumber: number): AsyncGenerator<Uint8Array> {
  checkKey(key);
  const cryptoKey = await cryptoKeyOf(key);
  const sealing = new InOrder<Uint8Array>();
  let held = Buffer.allocUnsafe(packagePlainBytes);
  let spare = Buffer.allocUnsafe(packagePlainBytes);
  let filled = 0;
  let index = 0;
  let full = false; // `spare` holds a complete package waiting to learn whether it is the last
  const seal = (plain: Uint8Array, final: boolean): void => sealing.push(sealPackageOffLoop(cryptoKey, key, { partNumber, index: index++, final }, plain));
  for await (const chunk of source) {
    let offset = 0;
    while (offset < chunk.length) {
      if (filled === packagePlainBytes) {
        if (full) seal(spare, false);
        [spare, held] = [held, spare];
        full = true;
        filled = 0;
      }
      const take = Math.min(packagePlainBytes - filled, chunk.length - offset);
      held.set(chunk.subarray(offset, offset + take), filled);
      filled += take;
      offset += take;
    }
    while (sealing.length >= limits.ssePackagesInFlight) yield await sealing.shift();
  }
  if (full && filled === 0) {
    seal(spare, true);
  } else {
    if (full) seal(spare, false);
    seal(held.subarray(0, filled), true);
  }
  while (sealing.length > 0) yield await sealing.shift();
}

/** One part as laid out in an object's stored bytes. */
export interface SealedPart {
  partNumber: number;
  plainSizeBytes: number;
}

/** A run of consecutive packages of one part that a read opens. */
export interface PackageRun {
  partNumber: number;
  firstIndex: number;
  count: number;
  /** Packages in the whole part (the last one is final). */
  partPackages: number;
  plainSizeBytes: number;
}

/** What to read from the stored bytes for a plaintext range, and how to open it. */
export interface SealedRead {
  /** Stored byte range holding every package the plaintext range touches. */
  cipherOffset: number;
  cipherLength: number;
  runs: PackageRun[];
  /** Plaintext bytes to drop from the first package opened, then bytes to hand on. */
  skipBytes: number;
  lengthBytes: number;
}

/**
 * The stored bytes and packages that hold plaintext bytes [offset, offset + length) of an object
 * made of `parts` (in order). A zero-length range reads nothing.
 */
export function cipherRangeOf(parts: readonly SealedPart[], range: { offset: number; length: number }): SealedRead {
  const runs: PackageRun[] = [];
  let plainStart = 0;
  let cipherStart = 0;
  let cipherOffset = -1;
  let cipherEnd = 0;
  let skipBytes = 0;
  const end = range.offset + range.length;
  for (const part of parts) {
    const plainEnd = plainStart + part.plainSizeBytes;
    const partPackages = packageCount(part.plainSizeBytes);
    if (part.plainSizeBytes === 0) {
      // An empty part inside the read: its lone tag lies between its neighbours' packages, so it is read and opened too.
      if (cipherOffset >= 0 && plainStart < end) {
        cipherEnd = cipherStart + sealedSizeBytes(0);
        runs.push({ partNumber: part.partNumber, firstIndex: 0, count: 1, partPackages, plainSizeBytes: 0 });
      }
    } else if (range.length > 0 && plainEnd > range.offset && plainStart < end) {
      const from = Math.max(range.offset, plainStart) - plainStart;
      const to = Math.min(end, plainEnd) - plainStart;
      const firstIndex = Math.floor(from / packagePlainBytes);
      const lastIndex = Math.floor((to - 1) / packagePlainBytes);
      if (cipherOffset < 0) {
        cipherOffset = cipherStart + firstIndex * packageSealedBytes;
        skipBytes = from - firstIndex * packagePlainBytes;
      }
      cipherEnd = cipherStart + Math.min((lastIndex + 1) * packageSealedBytes, sealedSizeBytes(part.plainSizeBytes));
      runs.push({ partNumber: part.partNumber, firstIndex, count: lastIndex - firstIndex + 1, partPackages, plainSizeBytes: part.plainSizeBytes });
    }
    plainStart = plainEnd;
    cipherStart += sealedSizeBytes(part.plainSizeBytes);
    if (plainStart >= end) break;
  }
  if (cipherOffset < 0) return { cipherOffset: 0, cipherLength: 0, runs: [], skipBytes: 0, lengthBytes: 0 };
  return { cipherOffset, cipherLength: cipherEnd - cipherOffset, runs, skipBytes, lengthBytes: range.length };
}

/** Sealed size of a package of a part. */
function sealedLengthOf(run: PackageRun, index: number): number {
  const plain = Math.min(packagePlainBytes, run.plainSizeBytes - index * packagePlainBytes);
  return Math.max(0, plain) + packageTagBytes;
}

/**
 * Opens the stored bytes of `read` (exactly its cipher range, in order) and yields the plaintext
 * range. A package that fails authentication, or stored bytes that end early, end the
 * stream with ObjectTampered before any byte of that package is handed on. Up to
 * limits.ssePackagesInFlight packages are opened at once, handed on in order. Each source chunk
 * is handed to `done` once no package still needs its bytes (so a lender can reuse it).
 */
export async function* openStream(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, key: PackageKey | ((partNumber: number) => PackageKey), read: SealedRead, done: (chunk: Uint8Array) => void = () => undefined): AsyncGenerator<Uint8Array> {
  const keyOfPart = typeof key === 'function' ? key : () => key;
  for (const run of read.runs) checkKey(keyOfPart(run.partNumber));
  const iterator = Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : (source as Iterable<Uint8Array>)[Symbol.iterator]();
  const held: Uint8Array[] = [];
  /** Hands back every received chunk but the one still being read from. */
  const handBack = (): void => {
    const keep = pending.length > 0 ? held.pop() : undefined;
    for (const chunk of held.splice(0)) done(chunk);
    if (keep) held.push(keep);
  };
  let pending: Uint8Array = new Uint8Array(0);
  // A package that spans chunks is gathered here; the opener copies it, so it serves the next one at once.
  const gathered = Buffer.allocUnsafe(packageSealedBytes);
  const take = async (length: number, at: PackagePosition): Promise<Uint8Array> => {
    let have = 0;
    while (have < length) {
      if (pending.length === 0) {
        const step = await iterator.next();
        if (step.done) tampered(at);
        pending = step.value;
        held.push(step.value);
        continue;
      }
      const slice = pending.subarray(0, Math.min(length - have, pending.length));
      pending = pending.subarray(slice.length);
      if (have === 0 && slice.length === length) return slice;
      gathered.set(slice, have);
      have += slice.length;
    }
    return gathered.subarray(0, length);
  };
  // Each package's plaintext bytes to hand on, as they are opened.
  const opening = new InOrder<Uint8Array>();
  const handOn = async function* (): AsyncGenerator<Uint8Array> {
    const piece = await opening.shift();
    if (piece.length > 0) yield piece;
  };
  let skip = read.skipBytes;
  let left = read.lengthBytes;
  try {
    for (const run of read.runs) {
      const runKey = keyOfPart(run.partNumber);
      const cryptoKey = await cryptoKeyOf(runKey);
      for (let index = run.firstIndex; index < run.firstIndex + run.count && left > 0; index += 1) {
        const at = { partNumber: run.partNumber, index, final: index === run.partPackages - 1 };
        const sealedLength = sealedLengthOf(run, index);
        const plain = openPackageOffLoop(cryptoKey, runKey, at, await take(sealedLength, at));
        handBack();
        const from = Math.min(skip, sealedLength - packageTagBytes);
        const to = Math.min(sealedLength - packageTagBytes, from + left);
        skip = 0;
        left -= to - from;
        opening.push(plain.then((bytes) => bytes.subarray(from, to)));
        while (opening.length >= limits.ssePackagesInFlight) yield* handOn();
      }
    }
    while (opening.length > 0) yield* handOn();
    if (left > 0) tampered({ partNumber: read.runs.at(-1)?.partNumber ?? 0, index: -1, final: true });
  } finally {
    pending = new Uint8Array(0);
    handBack();
    await iterator.return?.();
  }
}
