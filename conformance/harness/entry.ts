/**
 * How a harness runs the project's own programs (`svc`, `rc`): from the build in dist/ when it is
 * current, else from the TypeScript sources through tsx. A start from the build costs about half
 * the CPU of one through tsx (1.5 s against 3.2 s to a ready server, measured), and tests start
 * hundreds of servers; a build older than any source file is never used, so what runs is always
 * the code as it stands.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
/** What the programs are built from (the console's browser code included: the server serves its build). */
const sourceDirs = ['src', 'backends', 'fault-injection'];
const programs = { svc: 'src/cli/svc', rc: 'src/cli/rc' } as const;
export type Program = keyof typeof programs;

let current: boolean | undefined;

/** dist/ holds a build at least as new as every source file (checked once a process). */
export function buildIsCurrent(): boolean {
  current ??= builtAtMs() >= newestSourceMs();
  return current;
}

/** Forgets the answer (after a build). */
export function buildChanged(): void {
  current = undefined;
}

/** Node's arguments that run `program`: its build when current (or when `from` says so), else its source through tsx. */
export function programArgs(program: Program, from: 'build' | 'source' | 'current' = 'current'): string[] {
  const built = from === 'build' || (from === 'current' && buildIsCurrent());
  return built ? [`dist/${programs[program]}.js`] : ['--import', 'tsx', `${programs[program]}.ts`];
}

function builtAtMs(): number {
  try {
    return Math.min(...Object.values(programs).map((path) => statSync(join(repoRoot, 'dist', `${path}.js`)).mtimeMs));
  } catch {
    return -1;
  }
}

function newestSourceMs(): number {
  let newest = 0;
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  for (const dir of sourceDirs) walk(join(repoRoot, dir));
  return newest;
}
