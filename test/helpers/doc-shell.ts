/**
 * Runs a page's runnable shell blocks as a reader would: each block is one `bash` script (errexit,
 * pipefail, stderr into stdout) in the page's own working directory and HOME, with `svc` and `rc`
 * on PATH (the build in dist/), and loopback addresses moved to a subnet of 127.0.0.0/8 of its own.
 */
import { spawn } from 'node:child_process';
import { chmodSync, symlinkSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { repoRoot } from './server-process.js';

export interface BlockRun {
  code: number | null;
  output: string;
}

export interface DocShell {
  /** The page's working directory (also its HOME). */
  dir: string;
  /** `127.0.0.` as the page writes it, moved to this shell's subnet. */
  rewrite(text: string): string;
  run(script: string, timeoutMs: number): Promise<BlockRun>;
  /** Ends every process the blocks started (their process groups) and removes the directory. */
  close(): Promise<void>;
}

/** The loopback prefix the pages are written for. */
export const pagePrefix = '127.0.0.';
let lastSubnet: string | undefined;

/**
 * A subnet no other test uses (they stay on 127.0.0.x), for one page: nodes keep their documented
 * addresses' last byte and port. `127.<1-9>.<0-9>.` has the length of `127.0.0.`: pages upload
 * files holding addresses and show the sizes that follow, which must be what a reader typing the
 * page sees, whatever the draw. Never the previous draw of this process, so a page never meets a
 * server the page before it left behind.
 */
export function drawSubnet(random: () => number = Math.random): string {
  for (;;) {
    const subnet = `127.${1 + Math.floor(random() * 9)}.${Math.floor(random() * 10)}.`;
    if (subnet !== lastSubnet) return (lastSubnet = subnet);
  }
}

export function openDocShell(): DocShell {
  const dir = mkdtempSync(join(tmpdir(), 'svc-docs-'));
  const bin = join(dir, '.bin');
  mkdirSync(bin);
  const wrapper = (name: string, script: string, nodeOptions = '') => {
    writeFileSync(join(bin, name), `#!/bin/sh\nexec '${process.execPath}' ${nodeOptions}'${join(repoRoot, 'dist/src/cli', script)}' "$@"\n`);
    chmodSync(join(bin, name), 0o755);
  };
  wrapper('svc', 'svc.js', '--initial-old-space-size=64 ');
  wrapper('rc', 'rc.js');
  // The README runs the client as ./rc, the script at the checkout's root.
  symlinkSync(join(bin, 'rc'), join(dir, 'rc'));
  const subnet = drawSubnet();
  const groups: number[] = [];
  const env = { PATH: `${bin}:${dirname(process.execPath)}:${process.env.PATH ?? ''}`, HOME: dir, LANG: 'C.UTF-8', TERM: 'dumb' };
  const rewrite = (text: string) => text.replaceAll(pagePrefix, subnet);
  const run = (script: string, timeoutMs: number) =>
    new Promise<BlockRun>((resolve) => {
      const child = spawn('bash', ['-c', `set -e -o pipefail\nexec 2>&1\n${rewrite(script)}`], { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
      if (child.pid !== undefined) groups.push(child.pid);
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const timer = setTimeout(() => {
        output += `\n[the block ran longer than ${timeoutMs} ms and was stopped]`;
        child.kill('SIGKILL');
      }, timeoutMs);
      // A server the block left running in the background may hold the pipe: the block ends when bash exits.
      child.once('exit', (code) => {
        clearTimeout(timer);
        setTimeout(() => resolve({ code, output }), 50);
      });
    });
  const close = async () => {
    const alive = (group: number) => {
      try {
        process.kill(-group, 0);
        return true;
      } catch {
        return false;
      }
    };
    const signal = (name: NodeJS.Signals) =>
      groups.forEach((group) => {
        try {
          process.kill(-group, name);
        } catch {
          // the group has ended
        }
      });
    signal('SIGTERM');
    for (let waited = 0; waited < 10_000 && groups.some(alive); waited += 100) await new Promise((done) => setTimeout(done, 100));
    signal('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  return { dir, rewrite, run, close };
}
