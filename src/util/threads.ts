/** Starting worker threads from modules of this project, whether it runs built or from sources. */
import { Worker } from 'node:worker_threads';
import { packagedAsset } from './packaged.js';

/**
 * Starts a thread running the module `name` (without extension) that sits beside the module
 * `from` (its import.meta.url): the .js file when built, the .ts file under tsx. The thread does
 * not keep the process alive.
 */
export function startModuleThread(from: string, name: string, threadName: string): Worker {
  const embedded = packagedAsset(`${name}.mjs`);
  if (embedded) {
    // The single executable carries the thread's module bundled: it runs from a data: URL.
    const worker = new Worker(new URL(`data:text/javascript;base64,${embedded.toString('base64')}`), { name: threadName });
    worker.unref();
    return worker;
  }
  const fromSource = from.endsWith('.ts');
  const script = new URL(`./${name}.${fromSource ? 'ts' : 'js'}`, from);
  // A thread inherits the process's options by default. Passing them on explicitly would fail
  // for V8 options (node --max-old-space-size=..., --trace-gc), which threads do not take, so
  // they are passed only when TypeScript sources (tests, benchmarks) need a loader added.
  const needsLoader = fromSource && !process.execArgv.some((option) => option.includes('tsx'));
  const worker = new Worker(script, { name: threadName, ...(needsLoader ? { execArgv: ['--import', 'tsx'] } : {}) });
  worker.unref();
  return worker;
}
