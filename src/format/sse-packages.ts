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
 * The stream transforms seal and open each package on the event loop with one `node:crypto`
 * cipher: measured against WebCrypto on libuv's thread pool, it takes half the CPU per MB or less
 * (no copies into and out of the pool, no round trip per package), and CPU is what a busy server
 * lacks (docs/benchmarks.md, "SSE-S3 against plain").
 *
 * Pure code: bytes in, bytes out (the stream transforms take and give async iterables).
 */
import { createCipheriv, createDecipheriv, createHmac } from 'node:crypto';
import { SvcError } from '../errors/index.js';

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

const aadBytes = aadLabel.length + 4 + 8 + 1;

/** Writes a package's nonce into `into` (12 bytes). */
function writeNonce(into: Buffer, key: PackageKey, partNumber: number, index: number): void {
  into.writeUInt32BE(partNumber, 0);
  into.writeUInt32BE(Math.floor(index / 2 ** 32), 4);
  into.writeUInt32BE(index % 2 ** 32, 8);
  for (let position = 0; position < nonceBaseBytes; position += 1) into[position]! ^= key.nonceBase[position]!;
}

/** Writes a package's authenticated data into `into`. */
function writeAad(into: Buffer, at: PackagePosition): void {
  aadLabel.copy(into, 0);
  into.writeUInt32BE(at.partNumber, aadLabel.length);
  into.writeUInt32BE(Math.floor(at.index / 2 ** 32), aadLabel.length + 4);
  into.writeUInt32BE(at.index % 2 ** 32, aadLabel.length + 8);
  into[aadBytes - 1] = at.final ? 1 : 0;
}

function nonceFor(key: PackageKey, partNumber: number, index: number): Buffer {
  const nonce = Buffer.allocUnsafe(nonceBaseBytes);
  writeNonce(nonce, key, partNumber, index);
  return nonce;
}

function aadFor(partNumber: number, index: number, final: boolean): Buffer {
  const aad = Buffer.allocUnsafe(aadBytes);
  writeAad(aad, { partNumber, index, final });
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

function tampered(at: PackagePosition): never {
  throw new SvcError('ObjectTampered', undefined, { partNumber: at.partNumber, packageIndex: at.index });
}

/**
 * Seals a stream of plaintext as one part's package sequence, on the event loop. A package is
 * gathered in one reused buffer and sealed as soon as it is full and more bytes follow (so it is
 * known not to be the last); each sealed package is handed on as its ciphertext and then its tag,
 * both fresh memory.
 */
export async function* sealStream(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, key: PackageKey, partNumber: number): AsyncGenerator<Uint8Array> {
  checkKey(key);
  const held = Buffer.allocUnsafe(packagePlainBytes);
  const nonce = Buffer.allocUnsafe(nonceBaseBytes);
  const aad = Buffer.allocUnsafe(aadBytes);
  let filled = 0;
  let index = 0;
  const seal = (final: boolean): Buffer[] => {
    writeNonce(nonce, key, partNumber, index);
    writeAad(aad, { partNumber, index, final });
    index += 1;
    const cipher = createCipheriv(cipherName, key.dataKey, nonce, { authTagLength: packageTagBytes });
    cipher.setAAD(aad);
    const sealed = cipher.update(held.subarray(0, filled));
    cipher.final(); // GCM gives no more bytes here
    filled = 0;
    return sealed.length > 0 ? [sealed, cipher.getAuthTag()] : [cipher.getAuthTag()];
  };
  for await (const chunk of source) {
    let offset = 0;
    while (offset < chunk.length) {
      if (filled === packagePlainBytes) yield* seal(false);
      const take = Math.min(packagePlainBytes - filled, chunk.length - offset);
      held.set(chunk.subarray(offset, offset + take), filled);
      filled += take;
      offset += take;
    }
  }
  yield* seal(true);
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
 * range. Each package is opened on the event loop by one `node:crypto` decipher, from a view of
 * the source chunk that holds it (a package spanning chunks is gathered into one reused buffer),
 * and its plaintext is handed on only once its tag verified: a package that fails
 * authentication, or stored bytes that end early, end the stream with ObjectTampered before any
 * byte of that package is handed on. Each source chunk is handed to `done` once its last bytes
 * are in the decipher (which copies what it takes), so a lender can reuse it. The plaintext of the
 * packages opened from the stored bytes at hand goes out as one piece, before the stream waits
 * for more: a reader (a socket) gets about a stored block at a time, not sixteen 64 KiB pieces.
 * The piece is copied into memory from `gather` (fresh memory when unset): a caller whose reader
 * hands pieces back once written lends reused buffers, so the copy costs no new memory.
 */
export async function* openStream(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, key: PackageKey | ((partNumber: number) => PackageKey), read: SealedRead, done: (chunk: Uint8Array) => void = () => undefined, gather: (lengthBytes: number) => Uint8Array = (lengthBytes) => Buffer.allocUnsafe(lengthBytes)): AsyncGenerator<Uint8Array> {
  const keyOfPart = typeof key === 'function' ? key : () => key;
  for (const run of read.runs) checkKey(keyOfPart(run.partNumber));
  const iterator = Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : (source as Iterable<Uint8Array>)[Symbol.iterator]();
  let chunk: Uint8Array | undefined; // the chunk being read from, from `offset` on
  let offset = 0;
  const consumed: Uint8Array[] = []; // chunks read to their end, handed back once the decipher has their bytes
  // A package spanning chunks is gathered here (the decipher copies it, so it serves the next one at once).
  const gathered = Buffer.allocUnsafe(packageSealedBytes);
  /** The next `length` stored bytes: a view of the chunk that holds them all, else gathered. */
  const take = async (length: number, at: PackagePosition): Promise<Uint8Array> => {
    let have = 0;
    for (;;) {
      if (!chunk) {
        const step = await iterator.next();
        if (step.done) tampered(at);
        chunk = step.value;
        offset = 0;
      }
      const piece = chunk.subarray(offset, offset + Math.min(length - have, chunk.length - offset));
      offset += piece.length;
      if (offset === chunk.length) {
        consumed.push(chunk);
        chunk = undefined;
      }
      if (have === 0 && piece.length === length) return piece;
      gathered.set(piece, have);
      have += piece.length;
      if (have === length) return gathered.subarray(0, length);
    }
  };
  /** Whether taking `length` more stored bytes would wait for the source. */
  const wouldWait = (length: number): boolean => chunk === undefined || chunk.length - offset < length;
  const opened: Buffer[] = []; // plaintext not yet handed on
  let openedBytes = 0;
  const handOn = (): Uint8Array => {
    let piece: Uint8Array = opened[0]!;
    if (opened.length > 1) {
      piece = gather(openedBytes).subarray(0, openedBytes);
      let at = 0;
      for (const part of opened) {
        piece.set(part, at);
        at += part.length;
      }
    }
    opened.length = 0;
    openedBytes = 0;
    return piece;
  };
  const nonce = Buffer.allocUnsafe(nonceBaseBytes);
  const aad = Buffer.allocUnsafe(aadBytes);
  let skip = read.skipBytes;
  let left = read.lengthBytes;
  try {
    for (const run of read.runs) {
      const runKey = keyOfPart(run.partNumber);
      for (let index = run.firstIndex; index < run.firstIndex + run.count && left > 0; index += 1) {
        const at = { partNumber: run.partNumber, index, final: index === run.partPackages - 1 };
        const sealedLength = sealedLengthOf(run, index);
        const bodyLength = sealedLength - packageTagBytes;
        if (openedBytes > 0 && wouldWait(sealedLength)) yield handOn();
        const sealed = await take(sealedLength, at);
        writeNonce(nonce, runKey, at.partNumber, index);
        writeAad(aad, at);
        const decipher = createDecipheriv(cipherName, runKey.dataKey, nonce, { authTagLength: packageTagBytes });
        decipher.setAAD(aad);
        decipher.setAuthTag(sealed.subarray(bodyLength));
        const plain = decipher.update(sealed.subarray(0, bodyLength));
        for (const chunkDone of consumed.splice(0)) done(chunkDone);
        try {
          decipher.final(); // GCM gives no more bytes here: it only checks the tag
        } catch {
          tampered(at);
        }
        const from = Math.min(skip, bodyLength);
        const to = Math.min(bodyLength, from + left);
        skip = 0;
        left -= to - from;
        if (to > from) {
          opened.push(from === 0 && to === bodyLength ? plain : plain.subarray(from, to));
          openedBytes += to - from;
        }
      }
    }
    if (openedBytes > 0) yield handOn();
    if (left > 0) tampered({ partNumber: read.runs.at(-1)?.partNumber ?? 0, index: -1, final: true });
  } finally {
    for (const chunkDone of consumed.splice(0)) done(chunkDone);
    if (chunk) done(chunk);
    chunk = undefined;
    await iterator.return?.();
  }
}
