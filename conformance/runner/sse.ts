/** The server-side encryption headers as AWS names them, for the probes and the encryption checks. */
import { createHash } from 'node:crypto';

export const sseHeader = 'x-amz-server-side-encryption';
export const kmsKeyIdHeader = 'x-amz-server-side-encryption-aws-kms-key-id';
export const customerAlgorithmHeader = 'x-amz-server-side-encryption-customer-algorithm';
export const customerKeyMd5Header = 'x-amz-server-side-encryption-customer-key-md5';

/** The base64 MD5 of a customer key, as `...-customer-key-md5` carries it. */
export const keyMd5 = (key: Buffer) => createHash('md5').update(key).digest('base64');

/**
 * The three SSE-C headers for `key` (AES256, the key, its MD5); with `prefix`
 * `x-amz-copy-source-` the ones that open a copy's source.
 */
export function customerKeyHeaders(key: Buffer, prefix = 'x-amz-'): Record<string, string> {
  return {
    [`${prefix}server-side-encryption-customer-algorithm`]: 'AES256',
    [`${prefix}server-side-encryption-customer-key`]: key.toString('base64'),
    [`${prefix}server-side-encryption-customer-key-md5`]: keyMd5(key),
  };
}

/** A KMS key id reduced to its name: the part after `key/` of an ARN, else the id as given. */
export const bareKeyId = (id: string) => (id.startsWith('arn:') ? id.slice(id.lastIndexOf('/') + 1) : id);
