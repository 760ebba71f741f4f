/**
 * The durable small-file limit of the benchmark: create + write + fsync + rename of 4 KiB files,
 * 16 at a time, at most 2000 files or 5 s, in `<directory>/creates`. Prints the files per second.
 * Run it with UV_THREADPOOL_SIZE of at least 16, or fewer than 16 are in flight.
 *
 *   UV_THREADPOOL_SIZE=16 node --import tsx bench/creates.ts <directory>
 */
import { mkdir, open, rename } from 'node:fs/promises';
import { join } from 'node:path';

const concurrency = 16;
const maxFiles = 2000;
const maxMs = 5000;

async function durableCreatesPerSecond(dir: string): Promise<number> {
  await mkdir(join(dir, 'creates'), { recursive: true });
  const data = Buffer.alloc(4096, 'c');
  const deadline = performance.now() + maxMs;
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < maxFiles && performance.now() < deadline) {
      const tmp = join(dir, 'creates', `${next}.tmp`);
      const target = join(dir, 'creates', `${next}`);
      next += 1;
      const handle = await open(tmp, 'w');
      await handle.write(data);
      await handle.sync();
      await handle.close();
      await rename(tmp, target);
    }
  }));
  return next / ((performance.now() - started) / 1000);
}

const [directory] = process.argv.slice(2);
if (!directory) throw new Error('usage: bench/creates.ts <directory>');
console.log((await durableCreatesPerSecond(directory)).toFixed(1));
