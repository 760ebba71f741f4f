/**
 * Temporary credentials without server-side state (STS `AssumeRole`, `AssumeRoleWithWebIdentity`):
 * the session token is the session itself (its access key, secret, owner, policies, expiry),
 * sealed with AES-256-GCM under a key derived from the root credentials, so every node of a
 * deployment opens it and nobody else can make or read one. A token is refused once it expires;
 * the owner's state is checked on every request (iam-store.ts).
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { limits } from '../util/limits.js';

export interface SessionClaims {
  accessKey: string;
  secretKey: string;
  /** The user who assumed the role (a service account's user), or `oidc:<subject>` for a web identity. */
  parent: string;
  /** The service account that assumed the role: its inline policy stays a limit, and the session ends with it. */
  serviceAccount?: string;
  /** Web identities: the policies the provider's claim named (users act with their own, read live). */
  policies?: string[];
  /** The session policy's JSON text: it narrows, never widens. */
  sessionPolicy?: string;
  /** Web identities: the token's claims that `jwt:<claim>` condition keys may test. */
  claims?: Record<string, string>;
  issuedMs: number;
  expiresMs: number;
}

const ivBytes = 12;
const tagBytes = 16;
const prefix = 'svc1.';

export class SessionTokens {
  private readonly key: Buffer;
  private readonly opened = new Map<string, SessionClaims>();

  constructor(root: { accessKey: string; secretKey: string }) {
    this.key = Buffer.from(hkdfSync('sha256', root.secretKey, root.accessKey, 'svc sts session v1', 32));
  }

  seal(claims: SessionClaims): string {
    return prefix + sealText(this.key, JSON.stringify(claims));
  }

  /** The claims of a token sealed here (expired or not); undefined for anything else. */
  open(token: string): SessionClaims | undefined {
    const known = this.opened.get(token);
    if (known) return known;
    if (!token.startsWith(prefix) || token.length > limits.maxSessionTokenBytes) return undefined;
    const text = openText(this.key, token.slice(prefix.length));
    if (text === undefined) return undefined;
    const claims = JSON.parse(text) as SessionClaims;
    if (this.opened.size >= limits.maxCachedSessionTokens) this.opened.clear();
    this.opened.set(token, claims);
    return claims;
  }
}

/** base64url(iv | ciphertext | tag) of a text under an AES-256-GCM key. */
export function sealText(key: Buffer, text: string): string {
  const iv = randomBytes(ivBytes);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
}

/** The text sealed by `sealText` under this key; undefined when it was not (another key, altered bytes). */
export function openText(key: Buffer, sealed: string): string | undefined {
  try {
    const bytes = Buffer.from(sealed, 'base64url');
    if (bytes.length < ivBytes + tagBytes) return undefined;
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, ivBytes));
    decipher.setAuthTag(bytes.subarray(bytes.length - tagBytes));
    return Buffer.concat([decipher.update(bytes.subarray(ivBytes, bytes.length - tagBytes)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
