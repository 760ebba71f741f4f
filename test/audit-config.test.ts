/** The SVC_AUDIT_* variables as the server reads them: defaults, bounds, and the named refusals (docs/configuration.md). */
import { describe, expect, it } from 'vitest';
import { readServerConfig } from '../src/cluster/server-config.js';

const read = (env: Record<string, string>) => readServerConfig(['/tmp/svc-audit-config/d{1...4}'], env).audit;

function refusal(env: Record<string, string>): string {
  try {
    read(env);
    return 'accepted';
  } catch (error) {
    return `${(error as { code: string }).code}: ${(error as Error).message}`;
  }
}

describe('audit configuration', () => {
  it('is off by default, and takes a file and a webhook with their defaults', () => {
    expect(read({})).toEqual({});
    expect(read({ SVC_AUDIT_FILE: '/var/log/svc/audit.log', SVC_AUDIT_WEBHOOK_ENDPOINT: 'https://collector.example.com/svc' })).toEqual({
      file: '/var/log/svc/audit.log',
      webhook: { endpoint: 'https://collector.example.com/svc', queueLimitEntries: 100_000, batchSize: 100 },
    });
    expect(read({ SVC_AUDIT_WEBHOOK_ENDPOINT: 'http://127.0.0.1:8080/', SVC_AUDIT_WEBHOOK_AUTH_TOKEN: 'tok', SVC_AUDIT_WEBHOOK_QUEUE_DIR: '/q', SVC_AUDIT_WEBHOOK_QUEUE_LIMIT: '500', SVC_AUDIT_WEBHOOK_BATCH_SIZE: '50' }).webhook).toEqual({
      endpoint: 'http://127.0.0.1:8080/', authToken: 'tok', queueDirectory: '/q', queueLimitEntries: 500, batchSize: 50,
    });
    expect(read({ SVC_AUDIT_WEBHOOK_ENDPOINT: 'http://h/', SVC_AUDIT_WEBHOOK_QUEUE_LIMIT: '99999999999', SVC_AUDIT_WEBHOOK_BATCH_SIZE: '99999' }).webhook).toMatchObject({ queueLimitEntries: 10_000_000, batchSize: 10_000 });
  });

  it('refuses bad values with InvalidConfiguration naming the variable, never showing the token', () => {
    expect(refusal({ SVC_AUDIT_WEBHOOK_ENDPOINT: 'not a url' })).toBe('InvalidConfiguration: SVC_AUDIT_WEBHOOK_ENDPOINT="not a url" is not a URL');
    expect(refusal({ SVC_AUDIT_WEBHOOK_ENDPOINT: 'ftp://h/' })).toBe('InvalidConfiguration: SVC_AUDIT_WEBHOOK_ENDPOINT must be an http or https URL');
    expect(refusal({ SVC_AUDIT_WEBHOOK_ENDPOINT: 'https://user:pw@h/' })).toMatch(/must not carry credentials/);
    expect(refusal({ SVC_AUDIT_WEBHOOK_AUTH_TOKEN: 'tok' })).toBe('InvalidConfiguration: SVC_AUDIT_WEBHOOK_AUTH_TOKEN: SVC_AUDIT_WEBHOOK_ENDPOINT is not set, so SVC_AUDIT_WEBHOOK_AUTH_TOKEN would have no effect');
    expect(refusal({ SVC_AUDIT_WEBHOOK_ENDPOINT: 'http://h/', SVC_AUDIT_WEBHOOK_AUTH_TOKEN: 'secret\u0001tok' })).toBe('InvalidConfiguration: SVC_AUDIT_WEBHOOK_AUTH_TOKEN must not contain control characters');
    expect(refusal({ SVC_AUDIT_WEBHOOK_ENDPOINT: 'http://h/', SVC_AUDIT_WEBHOOK_QUEUE_LIMIT: 'lots' })).toBe('InvalidConfiguration: SVC_AUDIT_WEBHOOK_QUEUE_LIMIT="lots" is not a whole number');
    expect(refusal({ SVC_AUDIT_WEBHOOK_ENDPOINT: 'http://h/', SVC_AUDIT_WEBHOOK_BATCH_SIZE: '0' })).toBe('InvalidConfiguration: SVC_AUDIT_WEBHOOK_BATCH_SIZE must be at least 1');
    expect(refusal({ SVC_AUDIT_WEBHOOK_ENDPOINT: 'http://h/', SVC_AUDIT_WEBHOOK_QUEUE_LIMIT: '50' })).toBe('InvalidConfiguration: SVC_AUDIT_WEBHOOK_QUEUE_LIMIT=50 must be at least SVC_AUDIT_WEBHOOK_BATCH_SIZE=100');
  });
});
