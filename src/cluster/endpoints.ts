/** Endpoints: a drive given as a local path or as `http(s)://host:port/path` on some node. */
import { SvcError } from '../errors/index.js';

export type Endpoint =
  | { kind: 'local'; raw: string; path: string }
  | { kind: 'url'; raw: string; scheme: 'http' | 'https'; host: string; port: number; path: string };

export const defaultPort = 9000;

export function parseEndpoint(raw: string, pattern: string): Endpoint {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) return parseUrlEndpoint(raw, pattern);
  if (raw.trim() === '') throw invalid(pattern, 'an endpoint is empty');
  return { kind: 'local', raw, path: raw };
}

function parseUrlEndpoint(raw: string, pattern: string): Endpoint {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(pattern, `'${raw}' is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(pattern, `'${raw}' must use http or https`);
  if (url.pathname === '' || url.pathname === '/') throw invalid(pattern, `'${raw}' needs a drive path after the host`);
  if (url.search || url.hash || url.username) throw invalid(pattern, `'${raw}' must not carry a query, fragment or credentials`);
  return {
    kind: 'url',
    raw,
    scheme: url.protocol === 'https:' ? 'https' : 'http',
    host: url.hostname,
    port: url.port === '' ? defaultPort : Number(url.port),
    path: decodeURIComponent(url.pathname),
  };
}

/** A key that is equal for two spellings of the same drive. */
export function endpointIdentity(endpoint: Endpoint): string {
  if (endpoint.kind === 'local') return `local:${endpoint.path.replace(/\/+$/, '')}`;
  return `${endpoint.host.toLowerCase()}:${endpoint.port}${endpoint.path.replace(/\/+$/, '')}`;
}

export function hostOf(endpoint: Endpoint): string {
  return endpoint.kind === 'local' ? 'localhost' : `${endpoint.host.toLowerCase()}:${endpoint.port}`;
}

function invalid(pattern: string, problem: string): SvcError {
  return new SvcError('InvalidLayout', `invalid endpoint in '${pattern}': ${problem}`, { rule: 'endpoint-syntax', pattern });
}
