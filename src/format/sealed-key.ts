/**
 * Sealed keys (docs/formats.md, "Sealed keys"): a secret sealed with AES-256-GCM under a 32-byte
 * key-encryption key, bound to a context that is authenticated but not stored in it.
 *
 *   u8 version (1) | 12-byte random IV | ciphertext (as long as the secret) | 16-byte tag
 *
 * Used for data keys (sealed by a KMS key or an SSE-C customer key) and for the built-in KMS's
 * named keys (sealed by the root key). Pure code: bytes in, bytes out.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { SvcError } from '../errors/index.js';

export const sealedKeyVersion = 1;
const ivBytes = 12;
const tagBytes = 16;

/** `iv` is drawn at random unless given (golden fixtures give theirs, to be reproduced byte for byte). */
export function sealKey(kek: Uint8Array, secret: Uint8Array, context: string, iv: Uint8Array = randomBytes(ivBytes)): Buffer {
  if (kek.length !== 32) throw new SvcError('InternalError', 'a key-encryption key is 32 bytes');
  if (iv.length !== ivBytes) throw new SvcError('InternalError', 'a sealed key\'s IV is 12 bytes');
  const cipher = createCipheriv('aes-256-gcm', kek, iv, { authTagLength: tagBytes });
  cipher.setAAD(Buffer.from(context, 'utf8'));
  return Buffer.concat([Buffer.of(sealedKeyVersion), iv, cipher.update(secret), cipher.final(), cipher.getAuthTag()]);
}

/** The secret, or undefined when the key-encryption key or the context is not the one it was sealed with. */
export function unsealKey(kek: Uint8Array, sealed: Uint8Array, context: string): Buffer | undefined {
  if (sealed.length < 1 + ivBytes + tagBytes) throw new SvcError('CorruptFormat', 'sealed key: truncated');
  if (sealed[0] !== sealedKeyVersion) throw new SvcError('UnsupportedFormat', `sealed key: unsupported version ${sealed[0]}`);
  const iv = sealed.subarray(1, 1 + ivBytes);
  const body = sealed.subarray(1 + ivBytes, sealed.length - tagBytes);
  const decipher = createDecipheriv('aes-256-gcm', kek, iv, { authTagLength: tagBytes });
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(sealed.subarray(sealed.length - tagBytes));
  try {
    return Buffer.concat([decipher.update(body), decipher.final()]);
  } catch {
    return undefined;
  }
}

/** A key derived from `root` for one purpose (HMAC-SHA256 of the label). */
export function deriveKey(root: Uint8Array, label: string): Buffer {
  return createHmac('sha256', root).update(label, 'utf8').digest();
}
