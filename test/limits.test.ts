/**
 * src/util/limits.ts is the one place for the server's limits: every limit it exports is used by
 * the code (an unused one is a promise nothing keeps), and every variable its comments name as the
 * way to configure a limit has a row in docs/configuration.md.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as limitsModule from '../src/util/limits.js';
import { repoRoot } from './helpers/server-process.js';

const limitsPath = join('src', 'util', 'limits.ts');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(repoRoot, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(repoRoot, path)).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

/** Every source of the server but limits.ts itself, as one text. */
function serverSources(): string {
  return ['src', 'backends']
    .flatMap(sourceFiles)
    .filter((path) => path !== limitsPath)
    .map((path) => readFileSync(join(repoRoot, path), 'utf8'))
    .join('\n');
}

describe('limits.ts', () => {
  const sources = serverSources();
  const used = (name: string): boolean => new RegExp(`\\b${name}\\b`).test(sources);

  it('every limit is used by the server', () => {
    const names = Object.keys(limitsModule.limits);
    expect(names.length).toBeGreaterThan(50);
    expect(names.filter((name) => !used(`limits\\.${name}`) && !used(name))).toEqual([]);
  });

  it('every other export is used too', () => {
    const names = Object.keys(limitsModule).filter((name) => name !== 'limits');
    expect(names.filter((name) => !used(name))).toEqual([]);
  });

  it('the scan finds what is unused', () => {
    expect(used('limits\\.noSuchLimitAnywhere')).toBe(false);
    expect(used('limits\\.rpcTimeoutMs')).toBe(true);
  });

  it('every variable named as configuring a limit is documented in docs/configuration.md', () => {
    const text = readFileSync(join(repoRoot, limitsPath), 'utf8');
    const variables = [...new Set(text.match(/\bSVC_[A-Z0-9_]+/g) ?? [])];
    expect(variables.length).toBeGreaterThan(5);
    const configuration = readFileSync(join(repoRoot, 'docs', 'configuration.md'), 'utf8');
    expect(variables.filter((name) => !configuration.includes(`| \`${name}\` |`))).toEqual([]);
  });

  it('the limits docs/configuration.md names as configurable are limits', () => {
    const configuration = readFileSync(join(repoRoot, 'docs', 'configuration.md'), 'utf8');
    const section = configuration.slice(configuration.indexOf('### Limits'), configuration.indexOf('### Listing quorum'));
    const rows = section.split('\n').filter((line) => line.startsWith('| `'));
    const named = rows.flatMap((row) => [...row.split('|')[1]!.matchAll(/`([A-Za-z]+)`/g)].map((match) => match[1]!));
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((name) => !(name in limitsModule.limits))).toEqual([]);
  });
});
