/** S3 lists keys in UTF-8 byte order; JavaScript compares UTF-16 code units. */
export function compareKeys(a: string, b: string): number {
  if (a === b) return 0;
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * Merges sorted async streams into one sorted stream, grouping the items that share a key:
 * yields [key, items from each source that had it]. Sources are read lazily, one item ahead.
 */
export async function* mergeSorted<T>(sources: AsyncIterable<T>[], keyOf: (item: T) => string): AsyncGenerator<[string, T[]]> {
  const iterators = sources.map((source) => source[Symbol.asyncIterator]());
  const heads: (T | undefined)[] = await Promise.all(iterators.map(async (iterator) => (await iterator.next()).value as T | undefined));
  try {
    for (;;) {
      let smallest: string | undefined;
      for (const head of heads) {
        if (head !== undefined && (smallest === undefined || compareKeys(keyOf(head), smallest) < 0)) smallest = keyOf(head);
      }
      if (smallest === undefined) return;
      const group: T[] = [];
      const advancing: number[] = [];
      heads.forEach((head, index) => {
        if (head !== undefined && keyOf(head) === smallest) {
          group.push(head);
          advancing.push(index);
        }
      });
      await Promise.all(advancing.map(async (index) => {
        heads[index] = (await iterators[index]!.next()).value as T | undefined;
      }));
      yield [smallest, group];
    }
  } finally {
    await Promise.all(iterators.map((iterator) => iterator.return?.()));
  }
}
