/**
 * A real Prometheus (Debian's `prometheus`) scrapes a two-node process cluster with the scrape
 * configuration and token `rc admin prometheus generate` prints, every two seconds; the test reads
 * what it stored through its HTTP query API: request counters rise after a burst of PUTs, a
 * drive taken offline (fault injection) shows offline and its set degraded in a scrape no later
 * than two intervals after, a heal's counters move, and a job without the token is refused.
 * Skips with the reason when prometheus is missing; fails under CI (.ci/run installs it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';
import { freePort, s3ClientFor } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { generateScrapeConfig } from './helpers/metrics.js';
import { missingTool } from './helpers/external-tools.js';

// Short, so the test is quick; not the shortest possible, so a scrape still fits in it when the machine is busy.
const scrapeIntervalSeconds = 2;
const missing = missingTool('prometheus');
if (missing) console.warn(`skipping the Prometheus scrape test: ${missing}`);

interface QueryResult {
  metric: Record<string, string>;
  value?: [number, string];
  values?: [number, string][];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(missing !== undefined)('a real Prometheus scraping a two-node cluster', () => {
  let cluster: ProcessCluster;
  let prometheus: ChildProcess;
  let prometheusUrl: string;
  let prometheusLog = '';
  let home: string;
  let s3: S3Client;

  const query = async (promql: string): Promise<QueryResult[]> => {
    const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await response.json()) as { status: string; data: { result: QueryResult[] }; error?: string };
    if (body.status !== 'success') throw new Error(`query ${promql} failed: ${body.error}`);
    return body.data.result;
  };
  const scalar = async (promql: string): Promise<number | undefined> => {
    const [first] = await query(promql);
    return first?.value ? Number(first.value[1]) : undefined;
  };
  const waitFor = async (what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`Prometheus never showed ${what}\n${JSON.stringify(await query('{__name__=~"svc_heal.*"}'))}\n--- prometheus\n${prometheusLog.slice(-3000)}\n${cluster.logs().slice(-5000)}`);
      await sleep(250);
    }
  };

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'svc-prometheus-'));
    cluster = await startProcessCluster({ nodes: 2, drivesPerNode: 2, env: { SVC_FAULT_INJECTION: 'on', SVC_CODING_THREADS: '0' } });
    s3 = s3ClientFor(cluster.urls[0]!);
    const generated = await generateScrapeConfig(home, cluster.urls[0]!);
    // The generated configuration, a short interval, and the same target without the token.
    const config = [
      'global:',
      `  scrape_interval: ${scrapeIntervalSeconds}s`,
      `  scrape_timeout: ${scrapeIntervalSeconds}s`,
      generated.yaml.trimEnd(),
      '  - job_name: svc-unauthenticated',
      `    metrics_path: ${generated.metricsPath}`,
      '    static_configs:',
      `      - targets: ['${generated.target}']`,
      '',
    ].join('\n');
    await writeFile(join(home, 'prometheus.yml'), config);
    const port = await freePort('127.0.0.1');
    prometheusUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn('prometheus', [`--config.file=${join(home, 'prometheus.yml')}`, `--storage.tsdb.path=${join(home, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    prometheus.stdout!.on('data', (chunk: Buffer) => (prometheusLog += chunk.toString()));
    prometheus.stderr!.on('data', (chunk: Buffer) => (prometheusLog += chunk.toString()));
    await waitFor('its first scrape of svc', async () => (await scalar('up{job="svc-cluster"}').catch(() => undefined)) === 1, 30_000);
  }, 120_000);

  afterAll(async () => {
    s3?.destroy();
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus.once('exit', resolve));
      prometheus.kill('SIGTERM');
      await exited;
    }
    await cluster?.destroy();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('a scrape without the token is refused (the job is down and stores no svc samples)', async () => {
    await waitFor('the unauthenticated job scraped', async () => (await scalar('up{job="svc-unauthenticated"}')) !== undefined);
    expect(await scalar('up{job="svc-unauthenticated"}')).toBe(0);
    expect(await query('svc_node_info{job="svc-unauthenticated"}')).toEqual([]);
    expect(await scalar('up{job="svc-cluster"}')).toBe(1);
    // Both nodes answer in the cluster view.
    expect((await query('svc_node_up{job="svc-cluster"} == 1')).map((result) => result.metric.server).sort()).toEqual(cluster.urls.map((url) => new URL(url).host).sort());
  });

  it('request counters rise after a burst of PUTs (on both nodes, in the one cluster view)', async () => {
    const puts = 'sum(svc_s3_requests_total{job="svc-cluster",api="PutObject",status_class="2xx"})';
    const before = (await scalar(puts)) ?? 0;
    await s3.send(new CreateBucketCommand({ Bucket: 'burst' }));
    const second = s3ClientFor(cluster.urls[1]!);
    await Promise.all(Array.from({ length: 40 }, (_, index) => (index % 2 === 0 ? s3 : second).send(new PutObjectCommand({ Bucket: 'burst', Key: `object-${index}`, Body: `body ${index}` }))));
    second.destroy();
    await waitFor('40 more PUTs', async () => ((await scalar(puts)) ?? 0) >= before + 40);
    expect(await scalar(puts)).toBe(before + 40);
    for (const url of cluster.urls) expect(await scalar(`sum(svc_s3_requests_total{job="svc-cluster",api="PutObject",server="${new URL(url).host}"})`)).toBeGreaterThanOrEqual(20);
    // Each node wrote shards to the other's drives: internode calls, by peer.
    const [first, second_] = cluster.urls.map((url) => new URL(url).host);
    expect(await scalar(`sum(svc_rpc_calls_total{job="svc-cluster",server="${first}",peer="${second_}"})`)).toBeGreaterThan(0);
    expect(await scalar(`sum(svc_rpc_calls_total{job="svc-cluster",server="${second_}",peer="${first}"})`)).toBeGreaterThan(0);
  }, 60_000);

  it('a drive taken offline shows offline, and its set degraded, in a scrape within two intervals; a heal moves the heal counters', async () => {
    const node = cluster.urls[1]!;
    const drive = `http://${new URL(node).host}/data2`;
    const offlineSeries = `svc_drive_state{job="svc-cluster",drive="${drive}",state="offline"}`;
    expect(await scalar(offlineSeries)).toBe(0);
    const setFaults = async (plan: unknown) => expect((await admin(node, 'POST', '/svc/admin/v4/faults', `drive=${encodeURIComponent('/data2')}`, { body: JSON.stringify(plan) })).status).toBe(200);
    await setFaults({ offline: true });
    const offlineAtSeconds = Date.now() / 1000;
    await waitFor('the drive offline and the set degraded', async () => (await scalar(offlineSeries)) === 1 && (await scalar('max(svc_set_health_state{job="svc-cluster",pool="0",set="0",state="degraded"})')) === 1);
    // The first scrape that saw it (sample timestamps are scrape times).
    const [range] = await query(`${offlineSeries}[30s]`);
    const firstOfflineAt = range!.values!.find(([, value]) => value === '1')![0];
    expect(firstOfflineAt - offlineAtSeconds).toBeLessThanOrEqual(2 * scrapeIntervalSeconds);
    const [degradedRange] = await query(`svc_set_health_state{job="svc-cluster",server="${new URL(node).host}",pool="0",set="0",state="degraded"}[30s]`);
    expect(degradedRange!.values!.find(([, value]) => value === '1')![0] - offlineAtSeconds).toBeLessThanOrEqual(2 * scrapeIntervalSeconds);
    expect(await scalar(`svc_set_online_drives{job="svc-cluster",server="${new URL(node).host}"}`)).toBe(3);

    // Objects written while the drive is away miss their shard there: read repair (the writes
    // reported them) and the heal rebuild them between them; the heal scans every one.
    const repaired = 'sum(svc_heal_objects_healed_total{job="svc-cluster"}) + sum(svc_read_repair_processed_total{job="svc-cluster"})';
    const repairedBefore = (await scalar(repaired)) ?? 0;
    await s3.send(new CreateBucketCommand({ Bucket: 'healme' }));
    await Promise.all(Array.from({ length: 30 }, (_, index) => s3.send(new PutObjectCommand({ Bucket: 'healme', Key: `object-${index}`, Body: `healed body ${index}` }))));
    await setFaults({});
    await waitFor('the drive back online and the set healthy', async () => (await scalar(`svc_drive_state{job="svc-cluster",drive="${drive}",state="online"}`)) === 1 && (await scalar('min(svc_set_health_state{job="svc-cluster",pool="0",set="0",state="healthy"})')) === 1);
    const scanned = 'sum(svc_heal_objects_scanned_total{job="svc-cluster"})';
    const scannedBefore = (await scalar(scanned)) ?? 0;
    const started = await admin(cluster.urls[0]!, 'POST', '/svc/admin/v3/heal/healme', '', { body: JSON.stringify({}) });
    expect(started.status).toBe(200);
    await waitFor(`the heal counters move (${JSON.stringify(started.body).slice(0, 400)})`, async () => ((await scalar(scanned)) ?? 0) >= scannedBefore + 30 && ((await scalar(repaired)) ?? 0) >= repairedBefore + 30);
    expect(await scalar('sum(svc_heal_objects_failed_total{job="svc-cluster"})')).toBe(0);
  }, 90_000);
});
