/**
 * Metrics: the bearer token, the cluster view's merge, the endpoints' access rules on a real
 * server, and every exposed family's name, type and unit, with label cardinality that stays
 * bounded after 10,000 distinct keys are written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { generateScrapeConfig, parseExposition, sampleValue, type Family } from './helpers/metrics.js';
import { createMetricsToken, metricsKeyFor, verifyMetricsToken } from '../src/util/metrics-token.js';
import { mergeExpositions, withServerLabel } from '../src/api/metrics/cluster-view.js';
import { readServerConfig } from '../src/cluster/server-config.js';
import { isSvcError, SvcError } from '../src/errors/index.js';
import type { Drive } from '../src/drive/index.js';
import { instrumentDrive } from '../src/api/metrics/instrumented-drive.js';
import { apiOf, isReserved } from '../src/api/metrics/request-metrics.js';
import { createMemfsDrive } from '../backends/memfs/memfs-drive.js';
import { createFaultyDrive } from '../fault-injection/faulty-drive.js';

const dayMs = 24 * 60 * 60 * 1000;

describe('metrics bearer token', () => {
  const key = metricsKeyFor('root', 'root-secret');
  const keyFor = (accessKey: string) => (accessKey === 'root' ? key : undefined);
  const nowMs = Date.UTC(2030, 0, 1);

  it('is accepted when signed with the deployment key, for its access key, before it expires', () => {
    expect(verifyMetricsToken(keyFor, `Bearer ${createMetricsToken(key, 'root', nowMs, dayMs)}`, nowMs + dayMs - 1000)).toBe('root');
  });

  it.each([
    ['missing', undefined],
    ['not a bearer token', 'Basic cm9vdDpyb290LXNlY3JldA=='],
    ['signed with other credentials', `Bearer ${createMetricsToken(metricsKeyFor('root', 'other-secret'), 'root', nowMs, dayMs)}`],
    ['issued for another access key', `Bearer ${createMetricsToken(key, 'someone', nowMs, dayMs)}`],
    ['expired', `Bearer ${createMetricsToken(key, 'root', nowMs - 2 * dayMs, dayMs)}`],
    ['tampered claims', `Bearer ${createMetricsToken(key, 'root', nowMs, dayMs).replace(/^([^.]+)\.([^.]+)/, (_, header: string) => `${header}.${Buffer.from('{"iss":"svc-metrics","sub":"root","exp":99999999999}').toString('base64url')}`)}`],
  ])('is refused with AccessDenied when %s', (_, authorization) => {
    let caught: unknown;
    try {
      verifyMetricsToken(keyFor, authorization, nowMs);
    } catch (error) {
      caught = error;
    }
    expect(isSvcError(caught, 'AccessDenied')).toBe(true);
  });

  it('SVC_PROMETHEUS_AUTH_TYPE takes jwt (the default) or public; anything else stops startup', () => {
    expect(readServerConfig(['/tmp/x{1...4}'], {}).prometheusAuthType).toBe('jwt');
    expect(readServerConfig(['/tmp/x{1...4}'], { SVC_PROMETHEUS_AUTH_TYPE: 'public' }).prometheusAuthType).toBe('public');
    expect(() => readServerConfig(['/tmp/x{1...4}'], { SVC_PROMETHEUS_AUTH_TYPE: 'open' })).toThrow(/SVC_PROMETHEUS_AUTH_TYPE/);
  });
});

describe('cluster view', () => {
  it('labels every sample with its server and keeps one HELP and TYPE per family', () => {
    expect(withServerLabel('svc_a_total 3', 'n1:9000')).toBe('svc_a_total{server="n1:9000"} 3');
    expect(withServerLabel('svc_b_seconds_bucket{le="0.1",api="PutObject"} 2', 'n1:9000')).toBe('svc_b_seconds_bucket{server="n1:9000",le="0.1",api="PutObject"} 2');
    const node = (value: number) => `# HELP svc_x_total X.\n# TYPE svc_x_total counter\nsvc_x_total{api="GetObject"} ${value}\n`;
    const merged = parseExposition(mergeExpositions([{ server: 'a:1', text: node(1) }, { server: 'b:1', text: node(2) }, { server: 'c:1', text: undefined }]));
    expect(merged.get('svc_x_total')!.samples.map((sample) => [sample.labels.server, sample.value])).toEqual([['a:1', 1], ['b:1', 2]]);
    expect(sampleValue(merged, 'svc_node_up', { server: 'c:1' })).toBe(0);
    expect(sampleValue(merged, 'svc_node_up', { server: 'b:1' })).toBe(1);
  });
});

describe('instrumented drive', () => {
  it('times operations, tells answers from errors, and keeps the fault-injection controls reachable', async () => {
    const observed: [string, string][] = [];
    const faulty = createFaultyDrive(createMemfsDrive({ endpoint: '/m1' }));
    const drive = instrumentDrive(faulty, { observe: (operation, durationSeconds, outcome) => void observed.push([operation, durationSeconds >= 0 ? outcome : 'negative']) });
    await drive.writeFile('b/k', new Uint8Array([1, 2, 3]));
    await expect(drive.readFile('b/missing')).rejects.toThrow();
    expect('setFaults' in drive).toBe(true);
    drive.setFaults({ offline: true });
    expect(faulty.faults.offline).toBe(true);
    await expect(drive.readFile('b/k')).rejects.toThrow();
    expect((await drive.diskInfo()).online).toBe(false);
    expect(observed).toEqual([['writeFile', 'ok'], ['readFile', 'answer'], ['readFile', 'error'], ['diskInfo', 'ok']]);
  });

  it('counts a call that failed because internode RPC timed out as a timeout', async () => {
    const outcomes: string[] = [];
    const timingOut = { endpoint: 'http://peer:9000/d1', readFile: async () => Promise.reject(new SvcError('DriveOffline', 'drive is unreachable', {}, { cause: new Error('internode RPC timed out') })) } as unknown as Drive;
    await expect(instrumentDrive(timingOut, { observe: (_operation, _seconds, outcome) => void outcomes.push(outcome) }).readFile('x')).rejects.toThrow();
    expect(outcomes).toEqual(['timeout']);
  });
});

describe('S3 request classification', () => {
  it('leaves the health, admin, RPC and metrics paths out, and buckets that merely start alike in', () => {
    const reserved = ['/health', '/svc/'];
    for (const url of ['/health', '/health/ready', '/health?x=1', '/svc/metrics/node', '/svc/rpc/v1/peer/metrics']) expect(isReserved(url, reserved), url).toBe(true);
    for (const url of ['/', '/healthy/key', '/health-data', '/svcbucket/key', '/svc']) expect(isReserved(url, reserved), url).toBe(false);
  });

  it('names the API with the S3 router, and "Invalid" for what it refuses', () => {
    expect(apiOf('PUT', '/photos/2026/cat.jpg', { host: 'h' })).toBe('PutObject');
    expect(apiOf('GET', '/photos?list-type=2', { host: 'h' })).toBe('ListObjectsV2');
    expect(apiOf('POST', '/photos/a?uploads', { host: 'h' })).toBe('CreateMultipartUpload');
    expect(apiOf('PATCH', '/', { host: 'h' })).toBe('Invalid');
  });
});

/** Units a family name may end with (counters: `_total` after the unit). */
const unitSuffixes = ['bytes', 'seconds', 'ratio', 'drives', 'objects', 'versions', 'markers', 'buckets', 'events', 'tasks', 'requests', 'sequences', 'state', 'info', 'up'];

function checkNaming(family: Family): string | undefined {
  if (!family.name.startsWith('svc_')) return 'does not start with svc_';
  if (!family.help) return 'has no HELP';
  const base = family.type === 'counter' ? family.name.replace(/_total$/, '') : family.name;
  if (family.type === 'counter' && base === family.name) return 'is a counter not ending in _total';
  if (/^svc_(process|nodejs)_/.test(family.name)) return undefined; // prom-client's process families, named by it
  if (family.type !== 'counter' && family.name.endsWith('_total')) return 'ends in _total but is not a counter';
  if (!['counter', 'gauge', 'histogram'].includes(family.type)) return `has type ${family.type}`;
  if (family.type === 'counter' && base.endsWith('_objects')) return undefined;
  return unitSuffixes.some((unit) => base.endsWith(`_${unit}`)) || family.type === 'counter' ? undefined : `does not end with a unit (${unitSuffixes.join(', ')})`;
}

describe('metrics endpoints on a server', () => {
  let server: SvcProcess;
  let client: S3Client;
  let home: string;
  let token: string;

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'svc-metrics-'));
    server = await startSvc({ args: [join(home, 'drive{1...4}')], env: { SVC_DRIVE_BACKEND: 'memfs', SVC_CODING_THREADS: '0' } });
    client = s3ClientFor(server.url);
    token = (await generateScrapeConfig(home, server.url, 'node')).bearerToken;
  }, 60_000);

  afterAll(async () => {
    client?.destroy();
    await server?.stop();
    await rm(home, { recursive: true, force: true });
  });

  const scrape = async (view: 'node' | 'cluster', authorization?: string) => fetch(`${server.url}/svc/metrics/${view}`, authorization ? { headers: { authorization } } : {});

  it('rc admin prometheus generate prints a scrape configuration for the alias', async () => {
    const generated = await generateScrapeConfig(home, server.url);
    expect(generated).toMatchObject({ metricsPath: '/svc/metrics/cluster', scheme: 'http', target: new URL(server.url).host });
    // Each run signs a fresh token (its expiry moves with the clock): the YAML carries one of the same form.
    expect(generated.yaml).toMatch(new RegExp(`bearer_token: ${generated.bearerToken.split('.')[0]}\\.[\\w-]+\\.[\\w-]{43}\\n`));
    expect(generated.yaml).toContain(`targets: ['${new URL(server.url).host}']`);
  }, 30_000);

  it('refuses a scrape without a valid token with 403 and a named JSON error carrying the request id', async () => {
    const otherKey = metricsKeyFor(testCredentials.accessKeyId, 'not-the-secret-key');
    for (const authorization of [undefined, 'Bearer nonsense', `Bearer ${createMetricsToken(otherKey, testCredentials.accessKeyId, Date.now(), dayMs)}`]) {
      for (const view of ['node', 'cluster'] as const) {
        const response = await scrape(view, authorization);
        expect(response.status).toBe(403);
        const body = (await response.json()) as Record<string, string>;
        expect(body).toMatchObject({ Code: 'AccessDenied', Resource: `/svc/metrics/${view}` });
        expect(body.RequestId).toBe(response.headers.get('x-amz-request-id'));
      }
    }
  });

  it('serves both views with the generated token', async () => {
    for (const view of ['node', 'cluster'] as const) {
      const response = await scrape(view, `Bearer ${token}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const families = parseExposition(await response.text());
      expect(sampleValue(families, 'svc_node_info', {})).toBe(1);
    }
  });

  it('keeps names, types, units and label cardinality bounded after 10,000 distinct keys', async () => {
    await client.send(new CreateBucketCommand({ Bucket: 'cardinality' }));
    const keyOf = (index: number) => `many/${index.toString(36)}-${'x'.repeat(index % 7)}/key-${index}`;
    const putRange = async (from: number, to: number) => {
      let next = from;
      const worker = async () => {
        while (next < to) {
          const index = next++;
          await client.send(new PutObjectCommand({ Bucket: 'cardinality', Key: keyOf(index), Body: `body ${index}` }));
        }
      };
      await Promise.all(Array.from({ length: 16 }, worker));
    };
    await putRange(0, 100);
    await client.send(new GetObjectCommand({ Bucket: 'cardinality', Key: keyOf(1) })).then((answer) => answer.Body?.transformToString());
    await client.send(new GetObjectCommand({ Bucket: 'cardinality', Key: 'missing' })).catch(() => undefined);
    // The data-usage families follow buckets (at most the 100 largest, below), not keys; a scan may land in between.
    const seriesOf = (families: Map<string, Family>) => [...families.values()].filter((family) => !/^svc_(process|nodejs|usage)_/.test(family.name)).reduce((total, family) => total + family.samples.length, 0);
    const before = parseExposition(await (await scrape('node', `Bearer ${token}`)).text());

    await putRange(100, 10_000);
    await client.send(new GetObjectCommand({ Bucket: 'cardinality', Key: keyOf(9_999) })).then((answer) => answer.Body?.transformToString());
    await client.send(new GetObjectCommand({ Bucket: 'cardinality', Key: 'missing-too' })).catch(() => undefined);
    const text = await (await scrape('node', `Bearer ${token}`)).text();
    const after = parseExposition(text);

    const misnamed = [...after.values()].map((family) => [family.name, checkNaming(family)]).filter(([, problem]) => problem !== undefined);
    expect(misnamed).toEqual([]);
    expect(seriesOf(after)).toBe(seriesOf(before));
    expect([...after.values()].reduce((total, family) => total + family.samples.length, 0)).toBeLessThan(3_000);
    expect(text).not.toMatch(/key-\d|many\//);
    const labelNames = new Set([...after.values()].flatMap((family) => family.samples.flatMap((sample) => Object.keys(sample.labels))));
    expect([...labelNames].filter((name) => !['api', 'status_class', 'drive', 'operation', 'pool', 'set', 'state', 'peer', 'version', 'le', 'quantile', 'kind', 'space', 'type', 'major', 'minor', 'patch', 'bucket'].includes(name))).toEqual([]);
    for (const family of after.values()) if (family.samples.some((sample) => 'bucket' in sample.labels)) expect(family.samples.length, family.name).toBeLessThanOrEqual(100);
    expect(sampleValue(after, 'svc_s3_requests_total', { api: 'PutObject', status_class: '2xx' })).toBe(10_000);
    expect(sampleValue(after, 'svc_s3_requests_total', { api: 'GetObject', status_class: '4xx' })).toBe(2);
    expect(sampleValue(after, 'svc_s3_received_bytes_total', { api: 'PutObject' })).toBeGreaterThan(10_000 * 'body 0'.length);
    expect(sampleValue(after, 'svc_s3_request_duration_seconds_count', { api: 'PutObject' })).toBe(10_000);
    expect(sampleValue(after, 'svc_s3_in_flight_requests')).toBe(0);
    expect(sampleValue(after, 'svc_s3_sent_bytes_total', { api: 'GetObject' })).toBeGreaterThan(2 * 'body 9999'.length);
    const driveOperations = after.get('svc_drive_operation_duration_seconds')!.samples.filter((sample) => sample.name.endsWith('_count') && sample.labels.drive === join(home, 'drive1'));
    expect(driveOperations.reduce((total, sample) => total + sample.value, 0)).toBeGreaterThanOrEqual(10_000);
  }, 240_000);
});
