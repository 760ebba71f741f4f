/** Time is injected: code that reads the time takes a Clock, tests pass a fake one. */
export interface Clock {
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };

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
