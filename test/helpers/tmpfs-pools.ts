/**
 * Pools that really differ in fullness (what a rebalance needs): each pool directory on its own
 * small tmpfs. Mounting needs root; without it the caller skips its rebalance step with the reason
 * (and CI, which has root, fails instead).
 */
import { execFileSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

export interface TmpfsPools {
  /** The launch pattern of each pool: `<root>/<name>/d{1...4}`. */
  pools: string[];
  /** Why the pools are plain directories (no tmpfs), or undefined when each is its own tmpfs. */
  skipReason: string | undefined;
  /** Unmounts what was mounted. */
  unmount(): void;
}

export async function tmpfsPools(root: string, names: string[], size: string, what: string): Promise<TmpfsPools> {
  const mounts: string[] = [];
  let skipReason: string | undefined;
  for (const name of names) {
    await mkdir(join(root, name));
    try {
      if (skipReason === undefined) {
        execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', join(root, name)]);
        mounts.push(join(root, name));
      }
    } catch (error) {
      skipReason = `cannot mount tmpfs per pool (needs root): ${(error as Error).message.split('\n')[0]}`;
      if (process.env.CI) throw new Error(`CI requires ${skipReason}`);
      console.warn(`${what} skipped: ${skipReason}`);
    }
  }
  return {
    pools: names.map((name) => join(root, name, 'd{1...4}')),
    skipReason,
    unmount: () => {
      for (const mount of mounts.splice(0)) execFileSync('umount', [mount]);
    },
  };
}
