/** Time is injected: code that reads the time takes a Clock, tests pass a fake one. */
export interface Clock {
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };

/** Timers are injected too: background loops (retries, fsync cadence) take Timers, tests pass manual ones. */
export interface Timers {
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Node's timers, unreferenced: a pending retry or fsync never keeps the process alive. */
export const systemTimers: Timers = {
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
