/**
 * Exclusive ownership of a local endpoint path for the lifetime of a server process: a lock
 * file created with O_EXCL holding the owner's pid. A lock left by a dead process is taken
 * over; a live owner makes the second server fail with a clear message.
 */
import { readFileSync } from 'node:fs';
import { open, readFile, rm, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SvcError } from '../../src/errors/index.js';
import { systemDir } from '../../src/drive/index.js';

export interface OwnershipLock {
  readonly path: string;
  release(): Promise<void>;
}

export async function acquireOwnershipLock(rootPath: string): Promise<OwnershipLock> {
  const dir = join(rootPath, systemDir);
  await mkdir(dir, { recursive: true });
  const path = join(dir, 'owner.lock');
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      const handle = await open(path, 'wx');
      await handle.writeFile(`${process.pid}\n`);
      await handle.sync();
      await handle.close();
      return { path, release: () => rm(path, { force: true }) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
      if (Number.isInteger(owner) && owner !== process.pid && isAlive(owner)) {
        throw new SvcError('InvalidConfiguration', `endpoint ${rootPath} is already owned by process ${owner}; the service needs exclusive ownership of every endpoint path`, { rootPath, owner });
      }
      await rm(path, { force: true });
    }
  }
  throw new SvcError('InvalidConfiguration', `could not take ownership of ${rootPath}`);
}

/**
 * Whether a process with this pid runs. A zombie (killed, not yet reaped by its parent: a node
 * restarted at once after `kill -9`) holds no files and counts as dead; Linux tells by the state
 * in /proc/<pid>/stat, elsewhere a pid that answers counts as alive.
 */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !isZombie(pid);
}

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "<pid> (<command, may hold spaces and parentheses>) <state> ...": the state follows the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}
