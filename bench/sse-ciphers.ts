/**
 * The SSE package work alone, in one process (docs/benchmarks.md, "SSE-S3 against plain"): 64 MiB
 * sealed and opened as the streams do it now (WebCrypto on the thread pool, packages in flight)
 * and as they did before (one `node:crypto` cipher per package on the event loop, its output
 * concatenated), and the MD5 of 64 MiB for scale. Wall-clock MB/s and the process's CPU per MB.
 *
 *   node --import tsx bench/sse-ciphers.ts
 */
import { createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { cipherRangeOf, openPackage, openStream, packagePlainBytes, packageSealedBytes, sealPackage, sealStream } from '../src/format/sse-packages.js';

const size = 64 * 1024 * 1024;
const body = randomBytes(size);
const key = { dataKey: randomBytes(32), nonceBase: randomBytes(12) };

async function* pieces(bytes: Uint8Array, length = 64 * 1024): AsyncGenerator<Uint8Array> {
  for (let offset = 0; offset < bytes.length; offset += length) yield bytes.subarray(offset, offset + length);
}

/** The event-loop sealer as the stream used it: a fresh package buffer, one cipher, the output concatenated. */
async function* sealOnLoop(source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let index = 0;
  for await (const chunk of source) {
    const plain = Buffer.allocUnsafe(chunk.length);
    plain.set(chunk);
    yield sealPackage(key, { partNumber: 1, index, final: index === size / packagePlainBytes - 1 }, plain);
    index += 1;
  }
}

/** The event-loop opener as it was: per package, a decipher and its output concatenated. */
async function* openOnLoop(sealed: Uint8Array): AsyncGenerator<Uint8Array> {
  const count = size / packagePlainBytes;
  for (let index = 0; index < count; index += 1) {
    const nonce = Buffer.from(key.nonceBase);
    const counter = Buffer.alloc(12);
    counter.writeBigUInt64BE(BigInt(index), 4);
    counter.writeUInt32BE(1, 0);
    for (let position = 0; position < 12; position += 1) nonce[position]! ^= counter[position]!;
    const aad = Buffer.alloc(22);
    aad.write('svc-sse-1', 0, 'latin1');
    aad.writeUInt32BE(1, 9);
    aad.writeBigUInt64BE(BigInt(index), 13);
    aad[21] = index === count - 1 ? 1 : 0;
    const package_ = sealed.subarray(index * packageSealedBytes, (index + 1) * packageSealedBytes);
    const decipher = createDecipheriv('aes-256-gcm', key.dataKey, nonce, { authTagLength: 16 });
    decipher.setAAD(aad);
    decipher.setAuthTag(package_.subarray(packagePlainBytes));
    yield Buffer.concat([decipher.update(package_.subarray(0, packagePlainBytes)), decipher.final()]);
  }
}

/** The event-loop opener as it is now (`openPackage`: the decipher's output as it comes, no concat). */
async function* openOnLoopNow(sealed: Uint8Array): AsyncGenerator<Uint8Array> {
  const count = size / packagePlainBytes;
  for (let index = 0; index < count; index += 1) {
    yield openPackage(key, { partNumber: 1, index, final: index === count - 1 }, sealed.subarray(index * packageSealedBytes, (index + 1) * packageSealedBytes));
  }
}

async function drain(stream: AsyncIterable<Uint8Array>): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const chunk of stream) out.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  return out;
}

async function measure(name: string, run: () => Promise<unknown>): Promise<void> {
  await run();
  let best = { mbPerSecond: 0, cpuMsPerMb: Infinity };
  for (let turn = 0; turn < 3; turn += 1) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    await run();
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const mb = size / 1e6;
    if (mb / seconds > best.mbPerSecond) best = { mbPerSecond: mb / seconds, cpuMsPerMb: (used.user + used.system) / 1000 / mb };
  }
  console.log(`${name.padEnd(34)} ${best.mbPerSecond.toFixed(0).padStart(6)} MB/s  ${best.cpuMsPerMb.toFixed(2)} CPU ms/MB`);
}

const sealed = Buffer.concat(await drain(sealStream(pieces(body), key, 1)));
const read = cipherRangeOf([{ partNumber: 1, plainSizeBytes: size }], { offset: 0, length: size });
if (!Buffer.concat(await drain(openStream(pieces(sealed, 256 * 1024), key, read))).equals(body)) throw new Error('round trip failed');
console.log('64 MiB, best of 3 turns (the machine is shared: compare rows of one run)');
await measure('MD5 (event loop)', async () => createHash('md5').update(body).digest());
await measure('seal, before: cipher per package', () => drain(sealOnLoop(pieces(body))));
await measure('seal, now: thread pool, in flight', () => drain(sealStream(pieces(body), key, 1)));
await measure('open, before: cipher per package', () => drain(openOnLoop(sealed)));
await measure('open, event loop, no concat', () => drain(openOnLoopNow(sealed)));
await measure('open, now: thread pool, in flight', () => drain(openStream(pieces(sealed, 256 * 1024), key, read)));

