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
