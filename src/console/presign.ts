/**
 * Share links: a presigned S3 GET (SigV4 in the query string), signed with the root credentials
 * for the S3 API's URL. That URL is SVC_SERVER_URL when set (no forwarded header changes it);
 * otherwise the host name the browser used for the console (X-Forwarded-Host only through a
 * trusted proxy), its scheme, and the S3 listener's port.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import type { ClientOrigin } from './client-origin.js';

/** Where share links point: SVC_SERVER_URL when set, whatever host a request names; else derived from the request. */
export function shareBaseUrl(serverUrl: string | undefined, origin: ClientOrigin, s3Port: number): string {
  return serverUrl ?? s3BaseUrl(origin, s3Port);
}

export function s3BaseUrl(origin: ClientOrigin, s3Port: number): string {
  const hostname = new URL(`http://${origin.host}`).hostname;
  return `${origin.secure ? 'https' : 'http'}://${hostname}:${s3Port}`;
}

/** RFC 3986 encoding of a path segment (S3 keeps `/` between segments). */
function encodePath(text: string): string {
  return text
    .split('/')
    .map((segment) => encodeURIComponent(segment).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('/');
}

export async function presignGet(request: {
  base: string;
  bucket: string;
  key: string;
  versionId?: string;
  expiresSeconds: number;
  credentials: { accessKey: string; secretKey: string };
  nowMs: number;
}): Promise<string> {
  const url = new URL(request.base);
  const path = `/${encodePath(request.bucket)}/${encodePath(request.key)}`;
  const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials: { accessKeyId: request.credentials.accessKey, secretAccessKey: request.credentials.secretKey }, sha256: Sha256, uriEscapePath: false });
  const signed = await signer.presign(
    {
      method: 'GET',
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path,
      query: request.versionId !== undefined ? { versionId: request.versionId } : {},
      headers: { host: url.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
    },
    { expiresIn: request.expiresSeconds, signingDate: new Date(request.nowMs) },
  );
  const query = Object.entries(signed.query ?? {})
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`)
    .join('&');
  return `${url.origin}${path}?${query}`;
}
