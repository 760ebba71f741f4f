/** Runs the `rc` client as a real process (the build when current, else through tsx) with its own HOME and configuration directory. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { programArgs } from '../../conformance/harness/entry.js';
import { expect } from 'vitest';
import { repoRoot } from './server-process.js';

export interface RcRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runRc(home: string, args: string[], env: Record<string, string> = {}): Promise<RcRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...programArgs('rc'), ...args], { cwd: repoRoot, env: { PATH: process.env.PATH ?? '', HOME: home, RC_CONFIG_DIR: join(home, 'rc'), ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `rc` and `ok` (which expects exit 0 and returns stdout) for a home directory known later. */
export function rcIn(home: () => string): { rc(...args: string[]): Promise<RcRun>; ok(...args: string[]): Promise<string> } {
  const rc = (...args: string[]): Promise<RcRun> => runRc(home(), args, { RC_WATCH_INTERVAL_MS: '200' });
  const ok = async (...args: string[]): Promise<string> => {
    const run = await rc(...args);
    expect(run.code, `rc ${args.join(' ')}\n${run.stderr}`).toBe(0);
    return run.stdout;
  };
  return { rc, ok };
}
