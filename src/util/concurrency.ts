/** Runs `task` over the items of an (async) iterable with at most `limit` in flight. */
export async function forEachConcurrent<T>(items: Iterable<T> | AsyncIterable<T>, limit: number, task: (item: T) => Promise<void>): Promise<void> {
  const iterator = Symbol.asyncIterator in items ? items[Symbol.asyncIterator]() : (items as Iterable<T>)[Symbol.iterator]();
  let failed: unknown;
  const worker = async (): Promise<void> => {
    while (failed === undefined) {
      const next = await iterator.next();
      if (next.done) return;
      try {
        await task(next.value);
      } catch (error) {
        failed ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, limit) }, worker));
  if (failed !== undefined) {
    await iterator.return?.();
    throw failed;
  }
}

/** A budget of `limit` tasks in flight shared by several callers; the others wait in order. */
export class Limiter {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= Math.max(1, this.limit)) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running += 1;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
