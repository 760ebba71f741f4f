/**
 * Endpoint ownership: a lock left by a live process refuses a second server; one left by a dead
 * process, or by a zombie (killed, not yet reaped: a node restarted at once after `kill -9`), is
 * taken over.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireOwnershipLock } from '../backends/fs/ownership-lock.js';

let root: string | undefined;
let parent: ChildProcess | undefined;
afterEach(async () => {
  parent?.kill('SIGKILL');
  if (root) await rm(root, { recursive: true, force: true });
  root = undefined;
});

async function lockedBy(pid: number): Promise<string> {
  root = await mkdtemp(join(tmpdir(), 'svc-owner-'));
  await mkdir(join(root, '.svc.sys'), { recursive: true });
  await writeFile(join(root, '.svc.sys', 'owner.lock'), `${pid}\n`);
  return root;
}

/** A zombie: a child of `sleep` (which never waits for it) that has exited; and its live parent. */
async function zombieAndParent(): Promise<{ zombie: number; parent: number }> {
  parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const zombie = await new Promise<number>((resolve) => parent!.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))));
  for (let tries = 0; tries < 100; tries += 1) {
    const state = await readFile(`/proc/${zombie}/stat`, 'utf8').catch(() => '');
    if (state.slice(state.lastIndexOf(')') + 2).startsWith('Z')) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { zombie, parent: parent.pid! };
}

describe.skipIf(process.platform !== 'linux')('endpoint ownership lock', () => {
  it('refuses while the owner runs, takes over from a zombie owner', async () => {
    const { zombie, parent: live } = await zombieAndParent();
    await expect(acquireOwnershipLock(await lockedBy(live))).rejects.toThrow(`already owned by process ${live}`);
    await rm(root!, { recursive: true, force: true });
    const lock = await acquireOwnershipLock(await lockedBy(zombie));
    expect((await readFile(lock.path, 'utf8')).trim()).toBe(String(process.pid));
    await lock.release();
  });
});
