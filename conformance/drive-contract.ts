/**
 * The Drive contract: every backend (fs, memfs, remote, the fault-injecting wrapper with no
 * faults) must pass this suite unchanged.
 */
import { describe, expect, it, beforeEach, afterEach } from 'vitest';
import fc from 'fast-check';
import { isSvcError } from '../src/errors/index.js';
import type { Drive } from '../src/drive/index.js';
import { tmpDir, trashDir } from '../src/drive/index.js';

export interface DriveUnderTest {
  drive: Drive;
  cleanup(): Promise<void>;
}

const bytes = (text: string): Uint8Array => new Uint8Array(Buffer.from(text));
const text = (data: Uint8Array): string => Buffer.from(data).toString();

async function codeOf(action: () => Promise<unknown>): Promise<string> {
  try {
    await action();
  } catch (error) {
    return isSvcError(error) ? error.code : `non-SvcError: ${String(error)}`;
  }
  return 'no error';
}

async function walkAll(drive: Drive, prefix: string, startAfter?: string): Promise<string[]> {
  const paths: string[] = [];
  for await (const path of drive.walk(prefix, startAfter === undefined ? {} : { startAfter })) paths.push(path);
  return paths;
}

export function driveContractSuite(name: string, makeDrive: () => Promise<DriveUnderTest>): void {
  describe(`Drive contract: ${name}`, () => {
    let subject: DriveUnderTest;
    let drive: Drive;
    beforeEach(async () => {
      subject = await makeDrive();
      drive = subject.drive;
    });
    afterEach(async () => {
      await subject.cleanup();
    });

    it('writes, reads and overwrites whole files, creating parents', async () => {
      await drive.writeFile('b/k/file', bytes('one'));
      expect(text(await drive.readFile('b/k/file'))).toBe('one');
      await drive.writeFile('b/k/file', bytes('second'), { sync: true });
      expect(text(await drive.readFile('b/k/file'))).toBe('second');
      await drive.writeFileAtomic('b/x/atomic', bytes('atomic'));
      await drive.writeFileAtomic('b/x/atomic', bytes('replaced'));
      expect(text(await drive.readFile('b/x/atomic'))).toBe('replaced');
      expect(await drive.listDir(tmpDir).catch(() => [])).toEqual([]);
    });

    it('writes whether or not the directories exist yet; a rename of a missing source creates nothing', async () => {
      await drive.deleteRecursive(tmpDir);
      await drive.writeFileAtomic('n/e/w/atomic', bytes('1'));
      expect(text(await drive.readFile('n/e/w/atomic'))).toBe('1');
      await drive.writeFileAtomic('n/e/w/atomic', bytes('2'));
      expect(text(await drive.readFile('n/e/w/atomic'))).toBe('2');
      const writer = await drive.openWriter('n/x/y/part.1');
      await writer.write(bytes('streamed'));
      await writer.close();
      expect(text(await drive.readFile('n/x/y/part.1'))).toBe('streamed');
      expect(await codeOf(() => drive.rename('n/missing', 'm/deep/target'))).toBe('FileNotFound');
      expect(await codeOf(() => drive.stat('m'))).toBe('FileNotFound');
    });

    it('refuses paths that escape the drive root', async () => {
      for (const path of ['../x', '/abs', 'a/../b', 'a/./b', 'a//b', 'nul\0byte', 'back\\slash']) {
        expect(await codeOf(() => drive.readFile(path)), path).toBe('PathEscapesDrive');
        expect(await codeOf(() => drive.writeFile(path, bytes('x'))), path).toBe('PathEscapesDrive');
      }
    });

    it('names missing files, directories and type mismatches', async () => {
      expect(await codeOf(() => drive.readFile('missing'))).toBe('FileNotFound');
      expect(await codeOf(() => drive.stat('missing'))).toBe('FileNotFound');
      expect(await codeOf(() => drive.listDir('missing'))).toBe('FileNotFound');
      expect(await codeOf(() => drive.deleteFile('missing'))).toBe('FileNotFound');
      await drive.writeFile('d/f', bytes('x'));
      expect(await codeOf(() => drive.readFile('d'))).toBe('IsADirectory');
      expect(await codeOf(() => drive.deleteFile('d'))).toBe('IsADirectory');
      expect(await codeOf(() => drive.deleteDir('d'))).toBe('DirectoryNotEmpty');
      expect(await codeOf(() => drive.deleteDir('d/f'))).toBe('NotADirectory');
      expect(await codeOf(() => drive.writeFile('d/f/under', bytes('x')))).toBe('NotADirectory');
    });

    it('reads ranges and streams, short at the end of a file', async () => {
      const data = new Uint8Array(3 * 1024 * 1024 + 5).map((_, index) => index % 251);
      await drive.writeFile('r/data', data);
      expect(Buffer.from(await drive.readRange('r/data', 10, 100)).equals(Buffer.from(data.subarray(10, 110)))).toBe(true);
      expect((await drive.readRange('r/data', data.length - 3, 100)).length).toBe(3);
      expect((await drive.readRange('r/data', data.length + 10, 100)).length).toBe(0);
      // Long ranges at unaligned offsets, across the end, and past it (backends may read them around the page cache).
      for (const [offset, length] of [[4095, 200_000], [1, 1_500_000], [data.length - 70_000, 100_000], [data.length + 10, 100_000], [0, data.length]] as const) {
        const expected = data.subarray(offset, Math.min(offset + length, data.length));
        expect(Buffer.from(await drive.readRange('r/data', offset, length)).equals(Buffer.from(expected)), `range ${offset}+${length}`).toBe(true);
        const into = new Uint8Array(length + 3).fill(0xee);
        const placed = await drive.readRange('r/data', offset, length, into);
        expect(placed.buffer, `range ${offset}+${length} into a buffer`).toBe(into.buffer);
        expect(placed.byteOffset).toBe(into.byteOffset);
        expect(Buffer.from(placed).equals(Buffer.from(expected)), `range ${offset}+${length} into a buffer`).toBe(true);
      }
      expect(Buffer.from(await drive.readRange('r/data', 10, 100, new Uint8Array(100))).equals(Buffer.from(data.subarray(10, 110)))).toBe(true);
      const chunks: Uint8Array[] = [];
      for await (const chunk of drive.readStream('r/data', { offset: 1000, length: 2 * 1024 * 1024 })) chunks.push(chunk);
      expect(Buffer.concat(chunks).equals(Buffer.from(data.subarray(1000, 1000 + 2 * 1024 * 1024)))).toBe(true);
      const all: Uint8Array[] = [];
      for await (const chunk of drive.readStream('r/data')) all.push(chunk);
      expect(Buffer.concat(all).equals(Buffer.from(data))).toBe(true);
    });

    it('reads ranges through an open reader, short at the end, into a given buffer', async () => {
      const data = new Uint8Array(5 * 1024 * 1024 + 7).map((_, index) => (index * 7) % 253);
      await drive.writeFile('r/reader', data);
      const reader = await drive.openReader('r/reader');
      try {
        // Unaligned offsets, runs longer than one staging buffer, across the end and past it.
        for (const [offset, length] of [[0, 100], [4095, 300_000], [1, 4_300_000], [data.length - 70_000, 100_000], [data.length + 10, 100], [0, data.length]] as const) {
          const expected = data.subarray(offset, Math.min(offset + length, data.length));
          expect(Buffer.from(await reader.read(offset, length)).equals(Buffer.from(expected)), `range ${offset}+${length}`).toBe(true);
          const into = new Uint8Array(length + 3).fill(0xee);
          const placed = await reader.read(offset, length, into);
          expect(placed.buffer, `range ${offset}+${length} into a buffer`).toBe(into.buffer);
          expect(placed.byteOffset).toBe(into.byteOffset);
          expect(Buffer.from(placed).equals(Buffer.from(expected)), `range ${offset}+${length} into a buffer`).toBe(true);
        }
      } finally {
        await reader.close();
      }
      await reader.close(); // closing twice is harmless
      const missing = await codeOf(async () => {
        const opened = await drive.openReader('r/missing');
        try {
          await opened.read(0, 10);
        } finally {
          await opened.close();
        }
      });
      expect(missing).toBe('FileNotFound');
    });

    it('appends, creating the file', async () => {
      await drive.appendFile('a/log', bytes('ab'));
      await drive.appendFile('a/log', bytes('cd'));
      expect(text(await drive.readFile('a/log'))).toBe('abcd');
    });

    it('streams writes through a writer; abort leaves nothing', async () => {
      const writer = await drive.openWriter('w/part.1');
      await writer.write(bytes('hello '));
      await writer.write(bytes('world'));
      await writer.close();
      expect(text(await drive.readFile('w/part.1'))).toBe('hello world');
      const aborted = await drive.openWriter('w/part.2');
      await aborted.write(bytes('partial'));
      await aborted.abort();
      expect(await codeOf(() => drive.readFile('w/part.2'))).toBe('FileNotFound');
    });

    it('renames files and directories across directories, replacing a file target', async () => {
      await drive.writeFile('src/dir/a', bytes('a'));
      await drive.rename('src/dir', 'dst/deep/moved');
      expect(text(await drive.readFile('dst/deep/moved/a'))).toBe('a');
      expect(await codeOf(() => drive.stat('src/dir'))).toBe('FileNotFound');
      await drive.writeFile('f1', bytes('new'));
      await drive.writeFile('other/f2', bytes('old'));
      await drive.rename('f1', 'other/f2');
      expect(text(await drive.readFile('other/f2'))).toBe('new');
    });

    it('deletes files, empty directories and trees (through the trash)', async () => {
      await drive.makeDir('empty/dir');
      await drive.makeDir('empty/dir');
      expect((await drive.stat('empty/dir')).isDirectory).toBe(true);
      await drive.deleteDir('empty/dir');
      await drive.writeFile('tree/a/b/c', bytes('x'));
      await drive.writeFile('tree/d', bytes('y'));
      await drive.deleteRecursive('tree');
      await drive.deleteRecursive('tree');
      expect(await codeOf(() => drive.stat('tree'))).toBe('FileNotFound');
      expect(await walkAll(drive, '')).toEqual([]);
      expect(await drive.listDir(trashDir).catch(() => [])).toEqual([]);
    });

    it('lists a directory sorted, directories with a trailing slash', async () => {
      for (const path of ['l/b', 'l/a/x', 'l/a-b', 'l/c/y']) await drive.writeFile(path, bytes('.'));
      expect(await drive.listDir('l')).toEqual(['a-b', 'a/', 'b', 'c/']);
    });

    it('walks in lexical order of full paths, after startAfter, never into tmp or trash', async () => {
      const paths = ['a/b', 'a-b', 'a.b', 'a/c/d', 'ab', 'a/b0', 'z/\u00e9', 'z/e'];
      for (const path of paths) await drive.writeFile(path, bytes('.'));
      await drive.writeFileAtomic('sys', bytes('.'));
      const sorted = [...paths, 'sys'].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
      expect(await walkAll(drive, '')).toEqual(sorted);
      expect(await walkAll(drive, '', 'a/b0')).toEqual(sorted.filter((path) => Buffer.compare(Buffer.from(path), Buffer.from('a/b0')) > 0));
      expect(await walkAll(drive, 'a')).toEqual(['a/b', 'a/b0', 'a/c/d']);
      expect(await walkAll(drive, 'missing')).toEqual([]);
    });

    it('stats files and directories and reports disk info', async () => {
      await drive.writeFile('s/file', bytes('12345'));
      const stat = await drive.stat('s/file');
      expect(stat.sizeBytes).toBe(5);
      expect(stat.isDirectory).toBe(false);
      expect(stat.modTimeMs).toBeGreaterThan(0);
      expect((await drive.stat('s')).isDirectory).toBe(true);
      const info = await drive.diskInfo();
      expect(info.online).toBe(true);
      expect(info.totalBytes).toBeGreaterThan(0);
      expect(info.freeBytes + info.usedBytes).toBeLessThanOrEqual(info.totalBytes + 1);
      expect(info.endpoint).toBe(drive.endpoint);
    });

    it('property: whatever tree is written, walk returns exactly its files in order and bytes read back', async () => {
      const segment = fc.stringMatching(/^[a-z0-9._-]{1,6}$/).filter((s) => s !== '.' && s !== '..');
      const tree = fc.uniqueArray(fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('/')), { minLength: 1, maxLength: 12 });
      await fc.assert(
        fc.asyncProperty(tree, fc.uint8Array({ maxLength: 2048 }), async (paths, content) => {
          await drive.deleteRecursive('p');
          // A path that is a prefix directory of another cannot also be a file.
          const files = paths.filter((path) => !paths.some((other) => other.startsWith(`${path}/`)));
          for (const path of files) await drive.writeFile(`p/${path}`, content);
          const expected = files.map((path) => `p/${path}`).sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
          expect(await walkAll(drive, 'p')).toEqual(expected);
          for (const path of expected) expect(Buffer.from(await drive.readFile(path)).equals(Buffer.from(content))).toBe(true);
          if (content.length > 2) {
            const range = await drive.readRange(expected[0]!, 1, content.length - 2);
            expect(Buffer.from(range).equals(Buffer.from(content.subarray(1, content.length - 1)))).toBe(true);
          }
        }),
        { numRuns: 25 },
      );
    });

    it('a writer is done with a chunk once write() resolves: the caller may reuse its memory', async () => {
      const memory = new Uint8Array(300_000);
      const expected: Buffer[] = [];
      const writer = await drive.openWriter('reuse/part.1');
      for (const [round, size] of [4096, 100, 300_000, 4096, 65_536, 300_000, 7].entries()) {
        const reused = memory.subarray(0, size);
        reused.fill(round + 1);
        expected.push(Buffer.from(reused));
        await writer.write(reused);
        reused.fill(0xee); // the caller's next block lands here
      }
      await writer.close();
      expect(Buffer.from(await drive.readFile('reuse/part.1')).equals(Buffer.concat(expected))).toBe(true);
    });

    it('property: a writer stores exactly the bytes given, whatever their chunking (empty, odd-sized, over 1 MiB)', async () => {
      const chunk = fc.oneof(fc.integer({ min: 0, max: 9000 }), fc.integer({ min: 1_040_000, max: 1_100_000 }), fc.constantFrom(4096, 8192, 1 << 20));
      await fc.assert(
        fc.asyncProperty(fc.array(chunk, { maxLength: 5 }), fc.integer({ min: 0, max: 255 }), async (sizes, seed) => {
          const chunks = sizes.map((size, index) => new Uint8Array(size).map((_, offset) => (offset * 31 + index * 7 + seed) % 256));
          const writer = await drive.openWriter('chunked/part.1');
          for (const piece of chunks) await writer.write(piece);
          await writer.close();
          const stored = await drive.readFile('chunked/part.1');
          expect(stored.length).toBe(sizes.reduce((sum, size) => sum + size, 0));
          expect(Buffer.from(stored).equals(Buffer.concat(chunks))).toBe(true);
          expect((await drive.stat('chunked/part.1')).sizeBytes).toBe(stored.length);
        }),
        { numRuns: 12 },
      );
    });
  });
}
