/**
 * `svc healthcheck`: the container health check. Asks this node's S3 listener for
 * `/health/ready` and, when the console is enabled, the console listener for
 * `/svc/console/health` (SPEC "Reverse-proxy deployment rules" 5 and 8); healthy when both
 * answer 200 within the timeout.
 */
import { parseAddress, type ListenAddress } from '../cluster/server-config.js';
import { limits } from '../util/limits.js';

export interface HealthcheckResult {
  healthy: boolean;
  lines: string[];
}

export async function runHealthcheck(env: Record<string, string | undefined>, timeoutMs = limits.healthcheckTimeoutMs): Promise<HealthcheckResult> {
  const targets = [{ name: 'S3', url: urlOf(parseAddress('SVC_ADDRESS', env.SVC_ADDRESS ?? ':9000'), '/health/ready') }];
  if ((env.SVC_CONSOLE_ENABLE ?? 'true').toLowerCase() !== 'false') {
    targets.push({ name: 'console', url: urlOf(parseAddress('SVC_CONSOLE_ADDRESS', env.SVC_CONSOLE_ADDRESS ?? ':9001'), '/svc/console/health') });
  }
  const lines = await Promise.all(
    targets.map(async ({ name, url }) => {
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
        return { ok: response.status === 200, line: `${name} ${url}: ${response.status}` };
      } catch (error) {
        return { ok: false, line: `${name} ${url}: ${(error as Error).message}` };
      }
    }),
  );
  return { healthy: lines.every((entry) => entry.ok), lines: lines.map((entry) => entry.line) };
}

function urlOf(address: ListenAddress, path: string): string {
  const host = address.host === '' || address.host === '0.0.0.0' || address.host === '::' ? '127.0.0.1' : address.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}${path}`;
}
