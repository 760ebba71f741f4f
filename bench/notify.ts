/**
 * `npm run bench -- --notify`: the cost of bucket notifications on 4 KiB PUTs. One built svc (4 fs
 * drives, EC 2+2) with two event targets, a webhook (a node:http receiver in the bench's process
 * that answers 200) and NATS (the Debian nats-server, on loopback), and three buckets: one without
 * a rule, one whose rule sends every ObjectCreated event to the webhook, one to NATS. Each round
 * runs the same 4 KiB PUT load (bench/load.ts, in a process of its own, after its warm-up) against
 * each bucket, in an order that moves each round; each ratio is taken within its round and the goal
 * (each ratio at least 0.8) is judged on the median of the rounds'. Every PUT with a rule writes and
 * fsyncs its event to the target's queue before it is answered (the events of concurrent PUTs
 * share a file and its fsyncs); delivery runs beside the load.
 *
 *   npm run bench -- --notify [--quick] [--rounds=N] [--cpu-prof=DIR]
 *
 * `--cpu-prof=DIR`: the server runs under `node --cpu-prof` and writes its profile in DIR when it
 * stops (bench/profile-summary.ts reads it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, PutBucketNotificationConfigurationCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort, startSvc, testCredentials } from '../conformance/harness/server-process.js';
import { median, runBenchScript } from './shared.js';

type Case = 'none' | 'webhook' | 'nats';
const cases: Case[] = ['none', 'webhook', 'nats'];
const arns: Record<Exclude<Case, 'none'>, string> = { webhook: 'arn:svc:sqs::bench:webhook', nats: 'arn:svc:sqs::bench:nats' };

export async function runNotifyBench(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  const rounds = quick ? 1 : Number(args.find((arg) => arg.startsWith('--rounds='))?.slice('--rounds='.length) ?? '3');
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 9) throw new Error('--rounds=N: a whole number from 1 to 9');
  const profileDir = args.find((arg) => arg.startsWith('--cpu-prof='))?.slice('--cpu-prof='.length);
  const smallOps = quick ? 600 : 3000;
  const warmUpPairs = quick ? 300 : 3000;
  const root = await mkdtemp(join(tmpdir(), 'svc-bench-notify-'));
  const receiver = await startReceiver();
  const natsPort = await freePort();
  const nats = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(natsPort)], { stdio: 'ignore' });
  const server = await startSvc({
    entry: 'build',
    args: [join(root, 'd{1...4}')],
    env: {
      SVC_OBS_LOGGER_LEVEL: 'warn',
      ...(profileDir !== undefined ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` } : {}),
      SVC_NOTIFY_WEBHOOK_ENABLE_bench: 'on', SVC_NOTIFY_WEBHOOK_ENDPOINT_bench: receiver.url,
      SVC_NOTIFY_NATS_ENABLE_bench: 'on', SVC_NOTIFY_NATS_ADDRESS_bench: `127.0.0.1:${natsPort}`, SVC_NOTIFY_NATS_SUBJECT_bench: 'bench',
    },
  });
  try {
    const s3 = new S3Client({ endpoint: server.url, region: 'us-east-1', forcePathStyle: true, credentials: testCredentials });
    for (const kind of cases) {
      await s3.send(new CreateBucketCommand({ Bucket: `notify-${kind}` }));
      if (kind !== 'none') await s3.send(new PutBucketNotificationConfigurationCommand({ Bucket: `notify-${kind}`, NotificationConfiguration: { QueueConfigurations: [{ QueueArn: arns[kind], Events: ['s3:ObjectCreated:*'] }] } }));
    }
    console.log(`svc: 4 fs drives, EC 2+2, built server; 4 KiB PUT x32 concurrent, ${smallOps} per phase after ${warmUpPairs} warm-up pairs; ${rounds} round(s)\n`);
    const all: Record<Case, number>[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const figures = {} as Record<Case, number>;
      for (const kind of cases.map((_, position) => cases[(position + round) % cases.length]!)) {
        const args = [server.url, testCredentials.accessKeyId, testCredentials.secretAccessKey, String(smallOps), '0', 'small-put', 'http', '1', String(warmUpPairs)];
        const last = await runBenchScript(`the load against notify-${kind}`, 'load.ts', args, { env: { ...process.env, BENCH_BUCKET: `notify-${kind}` } });
        figures[kind] = (JSON.parse(last) as { smallPut: number }).smallPut;
      }
      console.log(`round ${round + 1}: no rule ${figures.none.toFixed(0)}/s, webhook ${figures.webhook.toFixed(0)}/s (x${(figures.webhook / figures.none).toFixed(2)}), NATS ${figures.nats.toFixed(0)}/s (x${(figures.nats / figures.none).toFixed(2)})`);
      all.push(figures);
    }
    console.log(`\nmedians: no rule ${median(all.map((figures) => figures.none)).toFixed(0)}/s; received by the webhook: ${receiver.count()} events`);
    for (const kind of ['webhook', 'nats'] as const) {
      const ratio = median(all.map((figures) => figures[kind] / figures.none));
      console.log(`${ratio >= 0.8 ? 'met    ' : 'not met'}  4 KiB PUT with a rule to ${kind.padEnd(7)} ${median(all.map((figures) => figures[kind])).toFixed(0).padStart(6)}/s >= 0.80 x no rule: x${ratio.toFixed(2)}`);
    }
  } finally {
    await server.stop();
    await receiver.stop();
    await stop(nats);
    await rm(root, { recursive: true, force: true });
  }
}

/** A webhook receiver in this process: answers every POST with 200 and counts it. */
async function startReceiver(): Promise<{ url: string; count(): number; stop(): Promise<void> }> {
  let received = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received += 1;
      response.writeHead(200).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/events`, count: () => received, stop: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}
