/** Time is injected: code that reads the time takes a Clock, tests pass a fake one. */
export interface Clock {
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };
