/** Signs and sends admin API requests (SigV4, root credentials by default) for tests. */
import { createHash } from 'node:crypto';
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { testCredentials } from './server-process.js';

export interface AdminAnswer {
  status: number;
  body: Record<string, any>;
}

export async function admin(baseUrl: string, method: 'GET' | 'POST', path: string, rawQuery = '', options: { credentials?: { accessKeyId: string; secretAccessKey: string }; unsigned?: boolean; body?: string } = {}): Promise<AdminAnswer> {
  const url = new URL(baseUrl);
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    const existing = query[name];
    query[name] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
  }
  const body = options.body ?? '';
  const headers: Record<string, string> = { host: url.host, 'x-amz-content-sha256': createHash('sha256').update(body).digest('hex') };
  let sendHeaders = headers;
  if (!options.unsigned) {
    const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials: options.credentials ?? testCredentials, sha256: Sha256, uriEscapePath: false });
    const signed = await signer.sign({ method, protocol: 'http:', hostname: url.hostname, port: Number(url.port), path, query, headers, body });
    sendHeaders = signed.headers as Record<string, string>;
  }
  const { host: _host, ...fetchHeaders } = sendHeaders;
  const response = await fetch(`${baseUrl}${path}${rawQuery ? `?${rawQuery}` : ''}`, { method, headers: fetchHeaders, ...(body !== '' ? { body } : {}) });
  const text = await response.text();
  let parsed: Record<string, any> = {};
  try {
    parsed = text ? (JSON.parse(text) as Record<string, any>) : {};
  } catch {
    parsed = { raw: text }; // an S3 (XML) answer
  }
  return { status: response.status, body: parsed };
}
