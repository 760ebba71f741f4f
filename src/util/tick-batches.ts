/**
 * Items queued during one turn of the event loop, handed over together once the turn's callbacks
 * and promise continuations have queued theirs (setImmediate), in runs of bounded length and
 * size: what lets the calls a node makes to one peer at once travel in one request.
 */
export interface TickBatchOptions<Item> {
  /** Takes one run of items (called once per run, in queue order). */
  send(items: Item[]): void;
  maxItems: number;
  /** Bytes an item adds to a run (0 when unset); a run stops before it would pass maxBytes, a larger item goes alone. */
  bytesOf?(item: Item): number;
  maxBytes?: number;
}

export class TickBatches<Item> {
  private queue: Item[] = [];
  private scheduled = false;

  constructor(private readonly options: TickBatchOptions<Item>) {}

  push(item: Item): void {
    this.queue.push(item);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const queued = this.queue;
    this.queue = [];
    for (const run of this.runsOf(queued)) this.options.send(run);
  }

  private runsOf(queued: Item[]): Item[][] {
    const maxBytes = this.options.maxBytes ?? Number.POSITIVE_INFINITY;
    const runs: Item[][] = [];
    let current: Item[] = [];
    let bytes = 0;
    for (const item of queued) {
      const size = this.options.bytesOf?.(item) ?? 0;
      if (current.length > 0 && (current.length >= this.options.maxItems || bytes + size > maxBytes)) {
        runs.push(current);
        current = [];
        bytes = 0;
      }
      current.push(item);
      bytes += size;
    }
    if (current.length > 0) runs.push(current);
    return runs;
  }
}
