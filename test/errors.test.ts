import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorCatalogue } from '../src/errors/index.js';
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
    const rows = new Map([...doc.matchAll(/^\| `(\w+)` \| (\d+) \|/gm)].map((match) => [match[1]!, Number(match[2])]));
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(Object.entries(errorCatalogue).map(([code, entry]) => [code, entry.httpStatus])));
  });

  it('names every code the source throws (and the spec\'s named errors are in it)', () => {
    const thrown = new Set<string>();
    for (const dir of ['src', 'backends', 'fault-injection']) {
      for (const file of sourceFiles(join(repoRoot, dir))) {
        for (const match of readFileSync(file, 'utf8').matchAll(/new SvcError\(\s*'(\w+)'/g)) thrown.add(match[1]!);
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
