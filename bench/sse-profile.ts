/**
 * SSE-S3 against plain in one process, without HTTP (docs/benchmarks.md, "SSE-S3 against plain"):
 * 64 MiB PUTs and GETs through the code the S3 handlers call (`putEncrypted`, `getDecrypted`) and
 * straight through the object layer, on 4 fs drives (EC 2+2) with coding threads as a server has
 * them, turn about so all share the machine's moment; and the same SSE-S3 PUT and GET with the
 * packages sealed and opened on the thread pool as before (bench/sse-offloop.ts), to compare in
 * one run. Prints MB/s and the process's CPU per MB (every thread). Made for profiling:
 *
 *   node --cpu-prof --cpu-prof-dir=DIR --import tsx bench/sse-profile.ts [--objects=N]
 *   node --import tsx bench/profile-summary.ts DIR/<file>.cpuprofile
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { ErasureSet, LocalNamespaceLocker, ObjectLayer, WorkerCoding } from '../src/object/index.js';
import { createFsDrive } from '../backends/fs/fs-drive.js';
import { BuiltinKms, validateKmsDocument, type KmsDocument } from '../src/ops/kms/builtin-kms.js';
import { StateStore } from '../src/ops/state-store.js';
import { StateFileQuarantine } from '../src/cluster/state-quarantine.js';
import { getDecrypted, plaintextTap, putEncrypted } from '../src/ops/sse/encrypted-objects.js';
import { newObjectKey, openObjectKey } from '../src/ops/sse/object-keys.js';
import { cipherRangeOf, sealedSizeBytes } from '../src/format/sse-packages.js';
import { openStreamOffLoop, sealStreamOffLoop } from './sse-offloop.js';

const MiB = 1024 * 1024;
const objectBytes = 64 * MiB;
const objects = Number(process.argv.find((arg) => arg.startsWith('--objects='))?.slice('--objects='.length) ?? 4);
const body = randomBytes(objectBytes);

/** The body as a request delivers it: 64 KiB pieces. */
async function* pieces(): AsyncGenerator<Uint8Array> {
  for (let offset = 0; offset < body.length; offset += 64 * 1024) yield body.subarray(offset, offset + 64 * 1024);
}

/** Reads a GET's body to its end, handing each chunk back; a body of any other length than the object's fails the bench. */
async function drain(stream: AsyncIterable<Uint8Array>, release: (chunk: Uint8Array) => void): Promise<number> {
  let bytes = 0;
  for await (const chunk of stream) {
    bytes += chunk.length;
    release(chunk);
  }
  if (bytes !== objectBytes) throw new Error(`a GET read ${bytes} bytes of ${objectBytes}`);
  return bytes;
}

interface Case {
  name: string;
  run: (index: number) => Promise<void>;
}

async function measure(entry: Case, rounds: number): Promise<{ mbPerSecond: number; cpuMsPerMb: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let index = 0; index < rounds; index += 1) await entry.run(index);
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const mb = (rounds * objectBytes) / 1e6;
  return { mbPerSecond: mb / seconds, cpuMsPerMb: (used.user + used.system) / 1000 / mb };
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'svc-sse-profile-'));
  const coding = new WorkerCoding(Math.min(availableParallelism(), 4));
  try {
    const drives = await Promise.all([0, 1, 2, 3].map((slot) => createFsDrive(join(root, `d${slot}`))));
    const set = new ErasureSet({
      poolIndex: 0, setIndex: 0, drives, deploymentId: '00000000-0000-4000-8000-000000000000', locker: new LocalNamespaceLocker(),
      clock: { nowMs: () => Date.now() }, newId: randomUUID, standardParity: 2, rrsParity: 1, blockSizeBytes: MiB, coding, listQuorum: 'optimal',
    });
    const layer = new ObjectLayer({ deploymentId: '00000000-0000-4000-8000-000000000000', pools: [{ index: 0, sets: [set] }], clock: { nowMs: () => Date.now() } });
    await layer.makeBucket('bench');
    const store = new StateStore<KmsDocument>({ name: 'kms.bin', magic: 'SVKM', drives: () => drives, validate: validateKmsDocument, quarantine: new StateFileQuarantine({ warn: () => undefined }) });
    const kms = new BuiltinKms({ root: { name: 'bench-root', key: randomBytes(32) }, store, nowMs: () => Date.now() });
    const options = { storageClass: 'STANDARD' as const, versioning: 'unversioned' as const, sizeBytes: objectBytes };
    const cases: Case[] = [
      { name: 'PUT plain', run: async (index) => void (await layer.putObject('bench', `plain-${index}`, pieces(), options)) },
      { name: 'PUT SSE-S3', run: async (index) => void (await putEncrypted(layer, kms, { kind: 'SSE-S3' }, 'bench', `sse-${index}`, pieces(), options)) },
      {
        name: 'PUT SSE pool',
        run: async (index) => {
          // putEncrypted with the thread-pool sealer of before.
          const { packageKey, record } = await newObjectKey(kms, { kind: 'SSE-S3' }, 'bench', `pool-${index}`);
          const tap = plaintextTap<void>(pieces(), [], undefined, coding);
          await layer.putObject('bench', `pool-${index}`, sealStreamOffLoop(tap.source, packageKey, 1), {
            ...options,
            sizeBytes: sealedSizeBytes(objectBytes),
            skipStoredMd5: true,
            beforeCommit: tap.beforeCommit,
            sealing: () => ({ etag: tap.plain().digests.md5, encryption: { ...record, plainSizeBytes: objectBytes, plainParts: [{ number: 1, sizeBytes: objectBytes }] } }),
          });
        },
      },
      {
        name: 'GET plain',
        run: async (index) => {
          const reader = await layer.getObject('bench', `plain-${index}`);
          await drain(reader.body, (chunk) => reader.release(chunk));
        },
      },
      {
        name: 'GET SSE-S3',
        run: async (index) => {
          const reader = await getDecrypted(layer, kms, 'bench', `sse-${index}`, {});
          await drain(reader.body, (chunk) => reader.release(chunk));
        },
      },
      {
        name: 'GET SSE pool',
        run: async (index) => {
          // getDecrypted with the thread-pool opener of before.
          const sealed = await layer.getObject('bench', `sse-${index}`, { sealed: true });
          const encryption = sealed.info.encryption!;
          const packageKey = await openObjectKey(kms, encryption, 'bench', `sse-${index}`, {});
          const read = cipherRangeOf([{ partNumber: 1, plainSizeBytes: encryption.plainSizeBytes }], { offset: 0, length: encryption.plainSizeBytes });
          await drain(openStreamOffLoop(sealed.body, packageKey, read, (chunk) => sealed.release(chunk)), () => undefined);
        },
      },
    ];
    for (const entry of cases) await measure(entry, 1); // warm-up: compiles both paths, writes object 0 of each
    const figures = new Map<string, { mbPerSecond: number; cpuMsPerMb: number }[]>();
    for (let turn = 0; turn < 2; turn += 1) {
      for (const entry of turn === 0 ? cases : [...cases].reverse()) {
        const figure = await measure(entry, objects);
        figures.set(entry.name, [...(figures.get(entry.name) ?? []), figure]);
      }
    }
    console.log(`${objects} x 64 MiB per case and turn, 2 turns, 4 fs drives EC 2+2, ${coding.name}`);
    for (const [name, list] of figures) {
      const mean = (pick: (figure: { mbPerSecond: number; cpuMsPerMb: number }) => number) => list.reduce((sum, figure) => sum + pick(figure), 0) / list.length;
      console.log(`${name.padEnd(12)} ${mean((figure) => figure.mbPerSecond).toFixed(0).padStart(5)} MB/s  ${mean((figure) => figure.cpuMsPerMb).toFixed(2)} CPU ms/MB`);
    }
    const ratio = (a: string, b: string) => figures.get(a)!.reduce((sum, figure) => sum + figure.mbPerSecond, 0) / figures.get(b)!.reduce((sum, figure) => sum + figure.mbPerSecond, 0);
    console.log(`SSE / plain: PUT x${ratio('PUT SSE-S3', 'PUT plain').toFixed(2)}, GET x${ratio('GET SSE-S3', 'GET plain').toFixed(2)}`);
    console.log(`SSE on the thread pool / plain: PUT x${ratio('PUT SSE pool', 'PUT plain').toFixed(2)}, GET x${ratio('GET SSE pool', 'GET plain').toFixed(2)}`);
    await Promise.all(drives.map((drive) => drive.close()));
  } finally {
    await coding.close();
    await rm(root, { recursive: true, force: true });
  }
}

await main();
