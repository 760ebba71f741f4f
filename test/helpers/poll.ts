/**
 * Waiting in tests without fixed sleeps: ask again and again until the answer is there, and fail
 * with a message that says what was awaited (and the last answer or error) when it never comes.
 * The timeout is a bound on a wait, never an assertion on speed.
 */

export interface PollOptions {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  /** Time between two asks (default 20 ms). */
  intervalMs?: number;
}

export class WaitTimeout extends Error {
  override name = 'WaitTimeout';
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function describeLast(last: { value?: unknown; error?: unknown }): string {
  if ('error' in last) return `; last error: ${last.error instanceof Error ? last.error.message : String(last.error)}`;
  if ('value' in last) return `; last answer: ${JSON.stringify(last.value)?.slice(0, 300) ?? String(last.value)}`;
  return '';
}

/**
 * Asks `probe` until it answers something other than undefined, null or false, and returns that
 * answer. A probe that throws is asked again (its error is reported if time runs out). `what`
 * names the awaited state in the timeout's message: "every peer released its locks".
 */
export async function waitFor<T>(what: string, probe: () => T | Promise<T>, options: PollOptions = {}): Promise<Exclude<T, undefined | null | false>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 20;
  const deadline = Date.now() + timeoutMs;
  const last: { value?: unknown; error?: unknown } = {};
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value as Exclude<T, undefined | null | false>;
      delete last.error;
      last.value = value;
    } catch (error) {
      delete last.value;
      last.error = error;
    }
    if (Date.now() >= deadline) throw new WaitTimeout(`waited ${timeoutMs} ms for ${what}, in vain${describeLast(last)}`);
    await pause(intervalMs);
  }
}

/**
 * The other half of waiting: a check that something does NOT happen. Asks `probe` every
 * `intervalMs` for `forMs` and fails at the first answer that differs from the first one (compared
 * as JSON), naming `what` and both answers. One look after a fixed sleep could miss a change that
 * came and went; this one sees every step the window holds.
 */
export async function staysTheSame<T>(what: string, probe: () => T | Promise<T>, options: { forMs: number; intervalMs?: number }): Promise<T> {
  const intervalMs = options.intervalMs ?? 50;
  const first = await probe();
  const expected = JSON.stringify(first);
  for (const deadline = Date.now() + options.forMs; Date.now() < deadline; ) {
    await pause(intervalMs);
    const now = JSON.stringify(await probe());
    if (now !== expected) throw new Error(`${what} changed: it was ${expected?.slice(0, 300)}, then ${now?.slice(0, 300)}`);
  }
  return first;
}
