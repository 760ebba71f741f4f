import { describe, expect, it } from 'vitest';
import { readServerConfig } from '../src/cluster/server-config.js';
import { limits } from '../src/util/limits.js';
import { codeOf } from './helpers/codes.js';

const volumes = ['/srv/d{1...4}'];
const timeouts = (env: Record<string, string>) => readServerConfig(volumes, env).requestTimeouts;

describe('S3 listener timeouts from the environment', () => {
  it('default to the limits, and read durations with their unit', () => {
    expect(timeouts({})).toEqual({ headersMs: limits.requestHeadersTimeoutMsDefault, bodyIdleMs: limits.requestBodyIdleTimeoutMsDefault, wholeMs: limits.requestTimeoutMsDefault });
    expect(timeouts({ SVC_API_HEADERS_TIMEOUT: '500ms', SVC_API_BODY_IDLE_TIMEOUT: '45s', SVC_API_REQUEST_TIMEOUT: '3h' })).toEqual({ headersMs: 500, bodyIdleMs: 45_000, wholeMs: 3 * 3_600_000 });
    expect(timeouts({ SVC_API_BODY_IDLE_TIMEOUT: '0', SVC_API_REQUEST_TIMEOUT: '0' })).toMatchObject({ bodyIdleMs: 0, wholeMs: 0 });
  });

  it('refuse what is not a duration, and a header timeout longer than the whole request', () => {
    for (const value of ['30', '1.5s', 'soon', '-1s', '10 s']) {
      expect(codeOf(() => timeouts({ SVC_API_BODY_IDLE_TIMEOUT: value })), value).toBe('InvalidConfiguration');
    }
    expect(codeOf(() => timeouts({ SVC_API_HEADERS_TIMEOUT: '2m', SVC_API_REQUEST_TIMEOUT: '1m' }))).toBe('InvalidConfiguration');
    expect(timeouts({ SVC_API_HEADERS_TIMEOUT: '0', SVC_API_REQUEST_TIMEOUT: '1m' })).toMatchObject({ headersMs: 0, wholeMs: 60_000 });
  });
});
