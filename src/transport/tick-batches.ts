/**
 * Items queued during one turn of the event loop, handed over together once the turn's callbacks
 * and promise continuations have queued theirs (setImmediate), in runs of bounded length and
 * size: what lets the calls a node makes to one peer at once travel in one request.
 *
 * With `maxInFlight`, the runs handed over but not yet settled (their `send` returned a promise)
 * hold the next ones back: while that many are out, new items wait, and go together in the turn
 * after one settles, or after `maxWaitMs` at most (a run that is never answered, a hung drive on
 * the far side, holds the others up no longer than that). Under load this is what makes the runs
 * long (the items of every request that arrived meanwhile share one exchange); a single request
 * waits for nothing, since nothing is out. A caller whose items carry deadlines takes the wait
 * off them (backends/remote's peer batcher counts each operation's timeout from its submission).
 */
export interface TickBatchOptions<Item> {
  /** Takes one run of items (called once per run, in queue order); a promise holds a place in the window until it settles. */
  send(items: Item[]): void | Promise<unknown>;
  maxItems: number;
  /** Bytes an item adds to a run (0 when unset); a run stops before it would pass maxBytes, a larger item goes alone. */
  bytesOf?(item: Item): number;
  maxBytes?: number;
  /** Runs handed over and unsettled at most before new items wait (unbounded when unset). */
  maxInFlight?: number;
  /** How long items wait for a place in the window at most before they go anyway (with maxInFlight). */
  maxWaitMs?: number;
}

export class TickBatches<Item> {
  private queue: Item[] = [];
  private scheduled = false;
  private inFlight = 0;
  /** Sends what waits for the window once it has waited maxWaitMs. */
  private waitTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: TickBatchOptions<Item>) {}

  /** Runs handed over whose promise has not settled yet. */
  get unsettled(): number {
    return this.inFlight;
  }

  /** Queues an item; an `urgent` one goes in the next turn's run whatever is out (what waits goes with it). */
  push(item: Item, urgent = false): void {
    this.queue.push(item);
    this.schedule(urgent);
  }

  private schedule(urgent = false): void {
    if (this.scheduled || this.queue.length === 0) return;
    if (urgent || !this.windowFull()) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    } else if (!this.waitTimer && this.options.maxWaitMs !== undefined) {
      this.waitTimer = setTimeout(() => this.flush(), this.options.maxWaitMs);
    }
  }

  private windowFull(): boolean {
    return this.options.maxInFlight !== undefined && this.inFlight >= this.options.maxInFlight;
  }

  private flush(): void {
    this.scheduled = false;
    clearTimeout(this.waitTimer);
    this.waitTimer = undefined;
    const queued = this.queue;
    this.queue = [];
    for (const run of this.runsOf(queued)) {
      const sent = this.options.send(run);
      if (!sent) continue;
      this.inFlight += 1;
      const settled = (): void => {
        this.inFlight -= 1;
        this.schedule();
      };
      sent.then(settled, settled);
    }
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
