/**
 * docs/architecture.md's "Where to look" answers each look-up with one file: the files must exist,
 * and the eight look-ups a newcomer asked for first keep their rows.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './helpers/server-process.js';

function whereToLook(): Map<string, string> {
  const text = readFileSync(join(repoRoot, 'docs', 'architecture.md'), 'utf8');
  const section = text.slice(text.indexOf('## Where to look'), text.indexOf('### Adding a peer operation'));
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').slice(1, -1).map((cell) => cell.trim());
    if (cells.length !== 2 || cells[0] === 'looking for' || cells[0]!.startsWith('---')) continue;
    const file = /^`([^`]+)`/.exec(cells[1]!);
    expect(file, line).not.toBeNull();
    rows.set(cells[0]!, file![1]!);
  }
  return rows;
}

describe('the architecture map', () => {
  it('answers each of the first look-ups with one file', () => {
    const rows = whereToLook();
    for (const lookUp of ['write quorum', 'decommission queue', 'inline budget', 'console sign-in', 'read-repair queue', 'SigV4', 'lock expiry', 'internode transport']) {
      expect(rows.get(lookUp), lookUp).toMatch(/^(src|conformance|backends|fault-injection)\/[\w/.-]+\.tsx?$/);
    }
  });

  it('names files that exist', () => {
    const missing = [...whereToLook().values()].filter((path) => !existsSync(join(repoRoot, path)));
    expect(missing).toEqual([]);
  });
});
