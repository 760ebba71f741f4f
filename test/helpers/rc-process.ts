/** Runs the `rc` client as a real process (through tsx) with its own home and config directory. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './server-process.js';

export interface RcRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runRc(home: string, args: string[], env: Record<string, string> = {}): Promise<RcRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/rc.ts', ...args], { cwd: repoRoot, env: { PATH: process.env.PATH ?? '', HOME: home, RC_CONFIG_DIR: join(home, 'rc'), ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
