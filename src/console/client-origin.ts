/**
 * Who a console request came from and how: its client address (for sign-in throttling and logs),
 * whether the browser used HTTPS (the session cookie's Secure flag) and the host name it used
 * (share links). Forwarded headers count only when the peer is a trusted proxy
 * (SVC_CONSOLE_TRUSTED_PROXIES, nobody by default: not even loopback, where any local process
 * could set them); from anyone else they are ignored.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { SvcError } from '../errors/index.js';

export interface ClientOrigin {
  /** The client: the socket's peer, or through a trusted proxy the nearest untrusted hop of X-Forwarded-For. */
  address: string;
  /** The socket's peer address (the proxy, when there is one). */
  peer: string;
  secure: boolean;
  /** host[:port] as the browser wrote it. */
  host: string;
  viaProxy: boolean;
}

export interface RawRequestFacts {
  remoteAddress: string | undefined;
  encrypted: boolean;
  headers: Record<string, string | string[] | undefined>;
}

export function trustedProxyList(entries: string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, bits] = entry.split('/');
    const type = isIPv6(address!) ? 'ipv6' : 'ipv4';
    if (!isIPv4(address!) && !isIPv6(address!)) throw new SvcError('InvalidConfiguration', `SVC_CONSOLE_TRUSTED_PROXIES: '${entry}' is not an IP address or CIDR range`, { variable: 'SVC_CONSOLE_TRUSTED_PROXIES' });
    if (bits === undefined) list.addAddress(address!, type);
    else list.addSubnet(address!, Number(bits), type);
  }
  return list;
}

function isTrusted(list: BlockList, address: string): boolean {
  const plain = address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
  return list.check(plain, isIPv6(plain) ? 'ipv6' : 'ipv4');
}

function first(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  return text?.split(',')[0]?.trim() || undefined;
}

export function clientOrigin(request: RawRequestFacts, trusted: BlockList): ClientOrigin {
  const peer = request.remoteAddress ?? 'unknown';
  const host = first(request.headers.host) ?? 'localhost';
  if (!isTrusted(trusted, peer)) return { address: peer, peer, secure: request.encrypted, host, viaProxy: false };
  // The nearest untrusted hop of X-Forwarded-For is the client (a client can prepend anything).
  const forwardedFor = String(request.headers['x-forwarded-for'] ?? '').split(',').map((hop) => hop.trim()).filter((hop) => hop !== '');
  let address = peer;
  for (let index = forwardedFor.length - 1; index >= 0; index -= 1) {
    address = forwardedFor[index]!;
    if (!(isIPv4(address) || isIPv6(address)) || !isTrusted(trusted, address)) break;
  }
  const proto = first(request.headers['x-forwarded-proto'])?.toLowerCase();
  const forwardedHost = first(request.headers['x-forwarded-host']);
  return { address, peer, secure: proto === undefined ? request.encrypted : proto === 'https', host: forwardedHost ?? host, viaProxy: forwardedFor.length > 0 || proto !== undefined || forwardedHost !== undefined };
}

/**
 * Whom failed sign-ins are counted against: the socket's peer, and through a trusted proxy the
 * client it forwards for (each forwarded address one key under its proxy). An untrusted peer's
 * forwarded headers never reach here, so a client cannot pick a fresh key per attempt.
 */
export function throttleKey(origin: ClientOrigin): string {
  return origin.address === origin.peer ? origin.peer : `${origin.peer} for ${origin.address}`;
}
