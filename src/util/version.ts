/** The package's name and version, read from the package.json above this module (src or dist). */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packagedAsset } from './packaged.js';

let cached: string | undefined;

export function packageVersion(): string {
  if (cached) return cached;
  const embedded = packagedAsset('version');
  if (embedded) return (cached = embedded.toString('utf8').trim());
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth += 1) {
    try {
      const parsed = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (parsed.name === 'svc' && parsed.version) return (cached = parsed.version);
    } catch {
      // not here: look one level up
    }
    dir = dirname(dir);
  }
  return (cached = 'unknown');
}
