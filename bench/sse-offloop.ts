/**
 * The package streams as they were before they moved onto the event loop, kept to measure
 * against (bench/sse-ciphers.ts, bench/sse-profile.ts): WebCrypto's AES-GCM on libuv's thread
 * pool, up to 16 packages at once, handed on in order. Same bytes as src/format/sse-packages.ts.
 */
import { webcrypto } from 'node:crypto';
import { SvcError } from '../src/errors/index.js';
import { packagePlainBytes, packageSealedBytes, packageTagBytes, type PackageKey, type SealedRead } from '../src/format/sse-packages.js';

const inFlight = 16;
const subtle = webcrypto.subtle;

function parameters(key: PackageKey, partNumber: number, index: number, final: boolean): webcrypto.AesGcmParams {
  const iv = Buffer.alloc(12);
  iv.writeUInt32BE(partNumber, 0);
  iv.writeBigUInt64BE(BigInt(index), 4);
  for (let position = 0; position < 12; position += 1) iv[position]! ^= key.nonceBase[position]!;
  const additionalData = Buffer.alloc(22);
  additionalData.write('svc-sse-1', 0, 'latin1');
  additionalData.writeUInt32BE(partNumber, 9);
  additionalData.writeBigUInt64BE(BigInt(index), 13);
  additionalData[21] = final ? 1 : 0;
  return { name: 'AES-GCM', iv, additionalData, tagLength: 128 };
}

function importKey(key: PackageKey): Promise<webcrypto.CryptoKey> {
  return subtle.importKey('raw', key.dataKey, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
}

function tampered(partNumber: number, index: number): never {
  throw new SvcError('ObjectTampered', undefined, { partNumber, packageIndex: index });
}

export async function* sealStreamOffLoop(source: AsyncIterable<Uint8Array>, key: PackageKey, partNumber: number): AsyncGenerator<Uint8Array> {
  const cryptoKey = await importKey(key);
  const sealing: Promise<Uint8Array>[] = []; // started in order, handed on in order
  let held = Buffer.allocUnsafe(packagePlainBytes);
  let spare = Buffer.allocUnsafe(packagePlainBytes);
  let filled = 0;
  let index = 0;
  let full = false;
  const seal = (plain: Uint8Array, final: boolean): void => {
    const work = subtle.encrypt(parameters(key, partNumber, index++, final), cryptoKey, plain).then((sealed) => new Uint8Array(sealed));
    work.catch(() => undefined);
    sealing.push(work);
  };
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
    while (sealing.length >= inFlight) yield await sealing.shift()!;
  }
  if (full && filled === 0) seal(spare, true);
  else {
    if (full) seal(spare, false);
    seal(held.subarray(0, filled), true);
  }
  while (sealing.length > 0) yield await sealing.shift()!;
}

/** Opens a whole-package read of one part (`read.runs` of one run, no skip) on the thread pool. */
export async function* openStreamOffLoop(source: AsyncIterable<Uint8Array>, key: PackageKey, read: SealedRead, done: (chunk: Uint8Array) => void = () => undefined): AsyncGenerator<Uint8Array> {
  const cryptoKey = await importKey(key);
  const opening: Promise<Uint8Array>[] = [];
  const gathered = Buffer.allocUnsafe(packageSealedBytes);
  const iterator = source[Symbol.asyncIterator]();
  const held: Uint8Array[] = [];
  let pending: Uint8Array = new Uint8Array(0);
  const take = async (length: number, index: number): Promise<Uint8Array> => {
    let have = 0;
    while (have < length) {
      if (pending.length === 0) {
        const step = await iterator.next();
        if (step.done) tampered(1, index);
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
  const handBack = (): void => {
    const keep = pending.length > 0 ? held.pop() : undefined;
    for (const chunk of held.splice(0)) done(chunk);
    if (keep) held.push(keep);
  };
  try {
    for (const run of read.runs) {
      for (let index = run.firstIndex; index < run.firstIndex + run.count; index += 1) {
        const plainLength = Math.min(packagePlainBytes, run.plainSizeBytes - index * packagePlainBytes);
        const sealed = await take(plainLength + packageTagBytes, index);
        const work = subtle.decrypt(parameters(key, run.partNumber, index, index === run.partPackages - 1), cryptoKey, sealed).then((plain) => new Uint8Array(plain), () => tampered(run.partNumber, index));
        work.catch(() => undefined);
        handBack();
        opening.push(work);
        while (opening.length >= inFlight) yield await opening.shift()!;
      }
    }
    while (opening.length > 0) yield await opening.shift()!;
  } finally {
    pending = new Uint8Array(0);
    handBack();
    // The stored stream ends here (its read lock is released), whether or not its last chunk was asked for.
    await iterator.return?.();
  }
}
