import { describe, expect, it } from 'vitest';
import { hostname } from 'node:os';
import { parseEndpoint } from '../src/cluster/endpoints.js';
import { ownEndpointTest } from '../src/cluster/own-endpoints.js';

const endpoint = (raw: string) => parseEndpoint(raw, raw);

describe('own endpoints', () => {
  it('listening on all addresses: a host name is own when it resolves to one of this machine\'s addresses (the docker-compose case)', async () => {
    const endpoints = ['http://node1:9000/d1', 'http://node2:9000/d1', 'http://node1:9100/d1', `http://${hostname()}:9000/d2`].map(endpoint);
    const resolved: Record<string, string[]> = { node1: ['127.0.0.1'], node2: ['192.0.2.77'] };
    const isOwn = await ownEndpointTest({ host: '0.0.0.0', port: 9000 }, endpoints, async (host) => resolved[host] ?? []);
    expect(endpoints.map(isOwn)).toEqual([true, false, false, true]);
  });

  it('listening on one address: only that address, or a name resolving to it', async () => {
    const endpoints = ['http://127.0.0.3:9000/d', 'http://127.0.0.4:9000/d', 'http://three:9000/d', 'http://unresolvable:9000/d'].map(endpoint);
    const isOwn = await ownEndpointTest({ host: '127.0.0.3', port: 9000 }, endpoints, async (host) => {
      if (host === 'three') return ['127.0.0.3'];
      throw new Error('ENOTFOUND');
    });
    expect(endpoints.map(isOwn)).toEqual([true, false, true, false]);
  });
});
