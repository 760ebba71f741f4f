/**
 * Before any test file: the build in dist/ is brought up to date with the sources, so every server
 * and `rc` the tests start runs from it (conformance/harness/entry.ts), and runs the code as it is.
 */
import { execFileSync } from 'node:child_process';
import { buildChanged, buildIsCurrent } from '../conformance/harness/entry.js';
import { repoRoot } from '../conformance/harness/server-process.js';

export default function setup(): void {
  if (buildIsCurrent()) return;
  console.log('dist/ is older than the sources: npm run build');
  execFileSync('npm', ['run', '-s', 'build'], { cwd: repoRoot, stdio: 'inherit' });
  buildChanged();
  if (!buildIsCurrent()) throw new Error('npm run build left dist/ older than the sources');
}
