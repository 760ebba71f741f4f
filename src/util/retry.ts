/**
 * Runs `action` up to `attempts` times, pausing 100 ms x attempt between tries; stops early when
 * `signal` is aborted. The last error is rethrown.
 */
export async function withAttempts<T>(action: () => Promise<T>, options: { attempts: number; signal?: AbortSignal }): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await action();
    } catch (error) {
      if (attempt >= options.attempts || options.signal?.aborted) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}
