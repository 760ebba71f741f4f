/**
 * Request headers an operation does not take, refused before anything is read or stored: a
 * client that asked for encryption where it cannot be given must never be told it got it.
 */
import type { S3Endpoint } from './router.js';
import { refuseMisplacedEncryption } from './sse-headers.js';

type Headers = Record<string, string | string[] | undefined>;

/** The guards every request goes through once routed (ACLs are checked by the handlers that take them, against the bucket). */
export function guardRequest(endpoint: S3Endpoint, headers: Headers, _ownerId: string): void {
  refuseMisplacedEncryption(endpoint, headers);
}
