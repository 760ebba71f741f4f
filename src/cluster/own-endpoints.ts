/**
 * Which URL endpoints are this node's own (SPEC "Endpoint rules"): the port must be the one this
 * node listens on, and the host must be this node, either literally (its listen address, its
 * hostname, localhost on loopback) or through name resolution to one of its interface
 * addresses. The identical launch command on every node then picks out each node's drives.
 */
import { lookup } from 'node:dns/promises';
import { hostname, networkInterfaces } from 'node:os';
import type { Endpoint } from './endpoints.js';
import type { ListenAddress } from './server-config.js';

export type OwnEndpointTest = (endpoint: Endpoint) => boolean;

export async function ownEndpointTest(address: ListenAddress, endpoints: Endpoint[], resolve: (host: string) => Promise<string[]> = resolveAll): Promise<OwnEndpointTest> {
  const wildcard = address.host === '0.0.0.0' || address.host === '::';
  const interfaceAddresses = new Set(Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((item) => item.address)));
  const ownNames = new Set([hostname().toLowerCase(), 'localhost']);
  const hosts = [...new Set(endpoints.flatMap((endpoint) => (endpoint.kind === 'url' && endpoint.port === address.port ? [endpoint.host] : [])))];
  const own = new Set<string>();
  await Promise.all(
    hosts.map(async (host) => {
      if (isOwnHost(host, address, wildcard, interfaceAddresses, ownNames)) {
        own.add(host);
        return;
      }
      // A name (not an address literal): own when it resolves to the listen address, or to one
      // of this machine's addresses while listening on all of them.
      const addresses = await resolve(host).catch(() => []);
      if (addresses.some((resolved) => (wildcard ? interfaceAddresses.has(resolved) : resolved === address.host))) own.add(host);
    }),
  );
  return (endpoint) => endpoint.kind === 'url' && endpoint.port === address.port && own.has(endpoint.host);
}

function isOwnHost(host: string, address: ListenAddress, wildcard: boolean, interfaceAddresses: Set<string>, ownNames: Set<string>): boolean {
  if (!wildcard) return host === address.host || (host === 'localhost' && address.host === '127.0.0.1');
  return interfaceAddresses.has(host) || ownNames.has(host.toLowerCase());
}

async function resolveAll(host: string): Promise<string[]> {
  return (await lookup(host, { all: true })).map((entry) => entry.address);
}
