/** Polls `url` until it answers 200, the process it waits for exits, or `timeoutMs` passes. */
export async function waitForOk(url: string, options: { timeoutMs?: number; exited?: () => boolean } = {}): Promise<boolean> {
  const started = Date.now();
  while (Date.now() - started < (options.timeoutMs ?? 30_000) && !options.exited?.()) {
    const ok = await fetch(url).then((response) => response.status === 200, () => false);
    if (ok) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}
