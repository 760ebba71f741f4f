import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorCatalogue, SvcError, withoutStack } from '../src/errors/index.js';
import { createFsDrive } from '../backends/fs/fs-drive.js';
import { repoRoot } from './helpers/server-process.js';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('the error catalogue', () => {
  it('is documented in docs/errors.md, code by code, with the same status', () => {
    const doc = readFileSync(join(repoRoot, 'docs/errors.md'), 'utf8');
    const rows = new Map([...doc.matchAll(/^\| `([\w.]+)` \| (\d+) \|/gm)].map((match) => [match[1]!, Number(match[2])]));
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(Object.entries(errorCatalogue).map(([code, entry]) => [code, entry.httpStatus])));
  });

  it('names every code the source throws (and the spec\'s named errors are in it)', () => {
    const thrown = new Set<string>();
    for (const dir of ['src', 'backends', 'fault-injection']) {
      for (const file of sourceFiles(join(repoRoot, dir))) {
        for (const match of readFileSync(file, 'utf8').matchAll(/new SvcError\(\s*'([\w.]+)'/g)) thrown.add(match[1]!);
      }
    }
    expect(thrown.size).toBeGreaterThan(20);
    for (const code of thrown) expect(Object.hasOwn(errorCatalogue, code), code).toBe(true);
    for (const code of ['PoolTopologyMismatch', 'UnsupportedSnsdExpansion', 'NotImplemented', 'InvalidStorageClass', 'InvalidArgument', 'ErasureWriteQuorum', 'ErasureReadQuorum', 'SlowDown']) {
      expect(Object.hasOwn(errorCatalogue, code), code).toBe(true);
    }
    expect(errorCatalogue.ErasureWriteQuorum.httpStatus).toBe(503);
    expect(errorCatalogue.ErasureReadQuorum.httpStatus).toBe(503);
  });
});

describe('errors that are answers', () => {
  it('are made without a stack, and the stack limit is put back even when making one throws', () => {
    const limit = Error.stackTraceLimit;
    const quiet = withoutStack(() => new SvcError('FileNotFound', 'no such file: a'));
    expect(quiet.stack).toBe('SvcError: no such file: a');
    expect(new SvcError('FileNotFound').stack).toMatch(/\n\s+at /);
    expect(() => withoutStack(() => {
      throw new Error('while making');
    })).toThrow('while making');
    expect(Error.stackTraceLimit).toBe(limit);
  });

  it('a file an fs drive does not have fails with its code, path and cause, and no stack', async () => {
    const root = mkdtempSync(join(tmpdir(), 'svc-quiet-'));
    const drive = await createFsDrive(root);
    try {
      for (const attempt of [() => drive.readFile('bucket/key/xl.meta'), () => drive.stat('bucket/key/xl.meta'), () => drive.readRange('bucket/key/part.1', 0, 10)]) {
        const error = await attempt().then(() => undefined, (failure: unknown) => failure as SvcError);
        expect(error).toMatchObject({ code: 'FileNotFound', details: { path: expect.stringContaining('bucket/key') } });
        expect((error?.cause as NodeJS.ErrnoException | undefined)?.code).toBe('ENOENT');
        expect(error?.stack).not.toMatch(/\n\s+at /);
      }
    } finally {
      await drive.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
