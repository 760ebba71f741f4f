/**
 * A copy of the build to alter, for the mutation checks: a test changes a line of the copy, runs
 * a scenario on it, and requires the scenario to catch what the change broke. The copy shares
 * the checkout's node_modules; it is removed by `removeBuildCopies` (call it in afterAll).
 */
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './server-process.js';

const made: string[] = [];

export interface BuildCopy {
  /** The copy's `svc.js`, to run as a server's script. */
  script: string;
  /**
   * Replaces every `from` in the copy's `dist/<path>` by `to`; throws when `from` is not there
   * (the source moved: the test must follow it).
   */
  replace(path: string, from: string, to: string): Promise<void>;
}

export async function copyOfBuild(prefix: string): Promise<BuildCopy> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  made.push(root);
  await cp(join(repoRoot, 'dist'), join(root, 'dist'), { recursive: true, filter: (source) => !source.includes('console-ui') });
  await cp(join(repoRoot, 'package.json'), join(root, 'package.json'));
  await symlink(join(repoRoot, 'node_modules'), join(root, 'node_modules'));
  return {
    script: join(root, 'dist/src/cli/svc.js'),
    async replace(path, from, to) {
      const file = join(root, 'dist', path);
      const text = await readFile(file, 'utf8');
      if (!text.includes(from)) throw new Error(`'${from}' is not in dist/${path} (the source moved: update the test)`);
      await writeFile(file, text.split(from).join(to));
    },
  };
}

export async function removeBuildCopies(): Promise<void> {
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
}
