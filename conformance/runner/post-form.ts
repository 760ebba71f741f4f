/**
 * Browser form uploads (POST Object) as a client builds them: a policy document (an expiration and
 * conditions) in Base64, signed with Signature Version 4 (`x-amz-algorithm`, `x-amz-credential`,
 * `x-amz-date`, `x-amz-signature`: the policy signed with the day's signing key, in hex) or with
 * Version 2 (`AWSAccessKeyId`, `signature`: HMAC-SHA1 of the policy, in Base64), sent as
 * multipart/form-data with the file last. Path-style (`POST /bucket`) only.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { send, signingKey, type Credentials, type RawAnswer } from './http.js';
import { signatureV2 } from './sigv2.js';

export interface FormRequest {
  bucket: string;
  /** The form's own fields (key, tagging, success_action_status, ...), sent in this order before the file. */
  fields: Record<string, string>;
  /** Conditions besides `{ bucket }` and those naming the signature's own fields. */
  conditions: unknown[];
  /** Seconds until the policy expires; 300 unless given. */
  expiresInSeconds?: number;
  /** Sign with this secret instead of the credentials' own (a forged signature). */
  secretKey?: string;
}

const policyOf = (expiresInSeconds: number, conditions: unknown[]) =>
  Buffer.from(JSON.stringify({ expiration: new Date(Date.now() + expiresInSeconds * 1000).toISOString(), conditions }), 'utf8').toString('base64');

/** The fields of a form signed with Signature Version 4 (region us-east-1), the policy naming each of them. */
export function formFieldsV4(credentials: Credentials, form: FormRequest): Record<string, string> {
  const amzDate = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const day = amzDate.slice(0, 8);
  const signed = { 'x-amz-algorithm': 'AWS4-HMAC-SHA256', 'x-amz-credential': `${credentials.accessKey}/${day}/us-east-1/s3/aws4_request`, 'x-amz-date': amzDate };
  const policy = policyOf(form.expiresInSeconds ?? 300, [{ bucket: form.bucket }, ...Object.entries(signed).map(([name, value]) => ({ [name]: value })), ...form.conditions]);
  const signature = createHmac('sha256', signingKey(form.secretKey ?? credentials.secretKey, day)).update(policy, 'utf8').digest('hex');
  return { ...form.fields, ...signed, policy, 'x-amz-signature': signature };
}

/** The fields of a form signed with Signature Version 2. */
export function formFieldsV2(credentials: Credentials, form: FormRequest): Record<string, string> {
  const policy = policyOf(form.expiresInSeconds ?? 300, [{ bucket: form.bucket }, ...form.conditions]);
  return { ...form.fields, AWSAccessKeyId: credentials.accessKey, policy, signature: signatureV2(form.secretKey ?? credentials.secretKey, policy) };
}

/** Sends `fields` and then `file` as multipart/form-data to `POST /bucket`. */
export function postForm(credentials: Credentials, bucket: string, fields: Record<string, string>, file: string | Buffer): Promise<RawAnswer> {
  const url = new URL(credentials.endpoint);
  const boundary = `----conformance${randomBytes(12).toString('hex')}`;
  const head = Object.entries(fields).map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join('');
  const fileHead = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="upload.txt"\r\nContent-Type: text/plain\r\n\r\n`;
  const body = Buffer.concat([Buffer.from(head + fileHead, 'utf8'), Buffer.from(file), Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8')]);
  return send(url, 'POST', `/${bucket}`, { host: url.host, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(body.length) }, body);
}
