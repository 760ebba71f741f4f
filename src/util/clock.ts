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

/**
 * A clock a test harness may move forward: the identity clock (session and web identity token
 * expiry, service account expiry). Only the fault-control admin route moves it, and that route
 * answers FaultInjectionDisabled unless SVC_FAULT_INJECTION=on.
 */
export class OffsetClock implements Clock {
  private offset = 0;

  constructor(private readonly base: Clock = systemClock) {}

  nowMs(): number {
    return this.base.nowMs() + this.offset;
  }

  get offsetMs(): number {
    return this.offset;
  }

  set offsetMs(offsetMs: number) {
    if (!Number.isSafeInteger(offsetMs)) throw new RangeError(`a clock offset is a whole number of milliseconds, not ${offsetMs}`);
    this.offset = offsetMs;
  }
}
