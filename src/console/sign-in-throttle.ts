/**
 * Failed sign-ins per client address: the first few are free, then each further failure locks
 * the address out for twice as long as the one before (up to a cap). A success clears the count.
 * The table is bounded: the oldest address is forgotten first.
 */
import { limits } from '../util/limits.js';

interface Record_ {
  failures: number;
  lockedUntilMs: number;
  lastFailureMs: number;
}

export class SignInThrottle {
  private readonly addresses = new Map<string, Record_>();

  /** Milliseconds the address must still wait, or 0 when it may try. */
  waitMs(address: string, nowMs: number): number {
    const record = this.current(address, nowMs);
    return record ? Math.max(0, record.lockedUntilMs - nowMs) : 0;
  }

  failed(address: string, nowMs: number): Record_ {
    const record = this.current(address, nowMs) ?? { failures: 0, lockedUntilMs: 0, lastFailureMs: nowMs };
    record.failures += 1;
    record.lastFailureMs = nowMs;
    const over = record.failures - limits.consoleFreeSignInFailures;
    if (over >= 0) record.lockedUntilMs = nowMs + Math.min(limits.consoleSignInLockoutMaxMs, limits.consoleSignInLockoutBaseMs * 2 ** over);
    this.addresses.delete(address);
    this.addresses.set(address, record);
    if (this.addresses.size > limits.consoleThrottledAddressesMax) this.addresses.delete(this.addresses.keys().next().value!);
    return record;
  }

  succeeded(address: string): void {
    this.addresses.delete(address);
  }

  /** The record of an address, forgotten once it has been quiet for the failure window. */
  private current(address: string, nowMs: number): Record_ | undefined {
    const record = this.addresses.get(address);
    if (record && nowMs - record.lastFailureMs > limits.consoleSignInFailureWindowMs && nowMs >= record.lockedUntilMs) {
      this.addresses.delete(address);
      return undefined;
    }
    return record;
  }
}
