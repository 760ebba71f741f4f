/**
 * Event targets through the admin API on a two-node cluster of real processes, with a real NATS
 * server and a webhook receiver: `rc admin event target add` on node 1 is in force on node 2 at
 * once (a rule names it, writes through node 2 reach NATS), secrets are never answered, a target a
 * rule names cannot be removed (EventTargetInUse, naming the bucket), one of the environment is
 * shown as such and can be neither replaced nor removed (EventTargetReadOnly), bad settings are
 * InvalidArgument naming the setting, a caller without admin:ConfigUpdate changes nothing, and the
 * targets outlive a restart. The state file's decoder is strict.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, PutBucketNotificationConfigurationCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';
import { s3ClientFor, testCredentials } from './helpers/server-process.js';
import { runRc } from './helpers/rc-process.js';
import { admin } from './helpers/admin-client.js';
import { waitFor } from './helpers/poll.js';
import { missingBroker, startBroker, type Broker } from './helpers/brokers.js';
import { natsConsumer, webhookReceiver, type Consumer, type WebhookReceiver } from './helpers/event-consumers.js';
import { validateEventTargets } from '../src/ops/events/target-store.js';
import { codeOf } from './helpers/codes.js';

const skip = missingBroker('nats');
const natsArn = 'arn:svc:sqs::live:nats';
const hookArn = 'arn:svc:sqs::hook2:webhook';
const envArn = 'arn:svc:sqs::envhook:webhook';

let cluster: ProcessCluster;
let home: string;
let nats: Broker;
let consumer: Consumer;
let webhook: WebhookReceiver;

const rc = (...args: string[]) => runRc(home, args);
async function ok(...args: string[]): Promise<string> {
  const run = await rc(...args);
  expect(run.code, `rc ${args.join(' ')}\n${run.stderr}`).toBe(0);
  return run.stdout;
}
async function targets(alias: string): Promise<Record<string, any>[]> {
  return (JSON.parse(await ok('admin', 'event', 'target', 'ls', alias, '--json')) as { targets: Record<string, any>[] }).targets;
}

beforeAll(async () => {
  if (skip) return;
  home = await mkdtemp(join(tmpdir(), 'svc-targets-api-'));
  nats = await startBroker('nats');
  consumer = await natsConsumer(nats.address, 'svc-live');
  webhook = await webhookReceiver();
  cluster = await startProcessCluster({ nodes: 2, drivesPerNode: 2, env: { SVC_NOTIFY_WEBHOOK_ENABLE_envhook: 'on', SVC_NOTIFY_WEBHOOK_ENDPOINT_envhook: webhook.url } });
  await ok('alias', 'set', 'one', cluster.urls[0]!, testCredentials.accessKeyId, testCredentials.secretAccessKey);
  await ok('alias', 'set', 'two', cluster.urls[1]!, testCredentials.accessKeyId, testCredentials.secretAccessKey);
  await s3ClientFor(cluster.urls[0]!).send(new CreateBucketCommand({ Bucket: 'pics' }));
}, 120_000);

afterAll(async () => {
  await cluster?.destroy();
  await consumer?.close();
  await webhook?.close();
  await nats?.dispose();
  if (home) await rm(home, { recursive: true, force: true });
});

describe.skipIf(skip !== undefined)(`event targets through the admin API${skip ? ` (skipped: ${skip})` : ''}`, () => {
  it('are added on every node at once, never show their secrets, and deliver without a restart', async () => {
    await ok('admin', 'event', 'target', 'add', 'one', 'nats', 'live', `address=${nats.address}`, 'subject=svc-live');
    const added = await rc('admin', 'event', 'target', 'add', 'one', 'webhook', 'hook2', `endpoint=${webhook.url}`, 'auth_token=s3cr3t-token', '--queue-limit', '500');
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain(`event target ${hookArn} added`);
    const onTwo = await targets('two');
    expect(onTwo.map((target) => [target.arn, target.source])).toEqual([[natsArn, 'api'], [envArn, 'environment'], [hookArn, 'api']].sort((first, second) => first[0]!.localeCompare(second[0]!)));
    expect(onTwo.find((target) => target.arn === hookArn)).toMatchObject({ settings: { ENDPOINT: webhook.url }, queueLimit: 500 });
    const human = await ok('admin', 'event', 'target', 'ls', 'two');
    expect(human).toMatch(/arn:svc:sqs::envhook:webhook\s+webhook\s+env/);
    expect(JSON.stringify(onTwo) + human + added.stdout).not.toContain('s3cr3t-token');

    const s3 = s3ClientFor(cluster.urls[1]!);
    await s3.send(new PutBucketNotificationConfigurationCommand({ Bucket: 'pics', NotificationConfiguration: { QueueConfigurations: [{ QueueArn: natsArn, Events: ['s3:ObjectCreated:*'] }, { QueueArn: hookArn, Events: ['s3:ObjectRemoved:*'] }] } }));
    await s3.send(new PutObjectCommand({ Bucket: 'pics', Key: 'cat.jpg', Body: 'meow' }));
    await s3ClientFor(cluster.urls[0]!).send(new PutObjectCommand({ Bucket: 'pics', Key: 'dog.jpg', Body: 'woof!' }));
    const records = await waitFor('both puts on NATS', async () => {
      const received = await consumer.records();
      return received.length >= 2 ? received : undefined;
    }, { timeoutMs: 20_000 });
    expect(records.map((record) => [record.eventName, record.s3.object.key, record.s3.object.size]).sort()).toEqual([['ObjectCreated:Put', 'cat.jpg', 4], ['ObjectCreated:Put', 'dog.jpg', 5]]);
  }, 60_000);

  it('refuses to remove a target a rule names, or one of the environment, and changes nothing', async () => {
    const inUse = await rc('admin', 'event', 'target', 'rm', 'two', natsArn);
    expect(inUse.code).toBe(1);
    expect(inUse.stderr).toMatch(/^rc: EventTargetInUse: .*pics/);
    const fromEnv = await rc('admin', 'event', 'target', 'rm', 'one', envArn);
    expect(fromEnv.stderr).toMatch(/^rc: EventTargetReadOnly/);
    const replaceEnv = await rc('admin', 'event', 'target', 'add', 'one', 'webhook', 'envhook', 'endpoint=http://127.0.0.1:1/x');
    expect(replaceEnv.stderr).toMatch(/^rc: EventTargetReadOnly/);
    const unknown = await rc('admin', 'event', 'target', 'rm', 'one', 'arn:svc:sqs::nope:nats');
    expect(unknown.stderr).toMatch(/^rc: NoSuchEventTarget/);
    expect((await targets('one')).map((target) => target.arn)).toEqual([natsArn, envArn, hookArn].sort());
  }, 60_000);

  it('names a bad setting, and refuses a caller without admin:ConfigUpdate', async () => {
    const badAddress = await rc('admin', 'event', 'target', 'add', 'one', 'nats', 'bad', 'address=no-port', 'subject=x');
    expect(badAddress.stderr).toMatch(/^rc: InvalidArgument: settings\.ADDRESS must be host:port/);
    const missingSetting = await rc('admin', 'event', 'target', 'add', 'one', 'nats', 'bad', `address=${nats.address}`);
    expect(missingSetting.stderr).toMatch(/^rc: InvalidArgument: settings\.SUBJECT must be set/);
    const unknownSetting = await rc('admin', 'event', 'target', 'add', 'one', 'webhook', 'bad', 'endpoint=http://127.0.0.1:1/x', 'colour=blue');
    expect(unknownSetting.stderr).toMatch(/^rc: InvalidArgument: settings: a webhook target has no setting COLOUR/);
    const badType = await rc('admin', 'event', 'target', 'add', 'one', 'kafka', 'bad', 'brokers=x');
    expect(badType.stderr).toMatch(/^rc: InvalidArgument: .*type/);
    const badId = await rc('admin', 'event', 'target', 'add', 'one', 'webhook', 'bad id!', 'endpoint=http://127.0.0.1:1/x');
    expect(badId.stderr).toMatch(/^rc: InvalidArgument: id/);

    expect((await admin(cluster.urls[0]!, 'POST', '/svc/admin/v4/iam/user/add', '', { body: JSON.stringify({ accessKey: 'viewer', secretKey: 'viewer-secret', policies: ['readonly'] }) })).status).toBe(200);
    await ok('alias', 'set', 'viewer', cluster.urls[0]!, 'viewer', 'viewer-secret');
    const refusedAdd = await rc('admin', 'event', 'target', 'add', 'viewer', 'webhook', 'sneaky', 'endpoint=http://127.0.0.1:1/x');
    expect(refusedAdd.stderr).toMatch(/^rc: AccessDenied: .*admin:ConfigUpdate/);
    const refusedRm = await rc('admin', 'event', 'target', 'rm', 'viewer', hookArn);
    expect(refusedRm.stderr).toMatch(/^rc: AccessDenied/);
    expect((await targets('one')).map((target) => target.arn)).toEqual([natsArn, envArn, hookArn].sort());
  }, 60_000);

  it('are removed from every node once no rule names them, and outlive a restart', async () => {
    await s3ClientFor(cluster.urls[0]!).send(new PutBucketNotificationConfigurationCommand({ Bucket: 'pics', NotificationConfiguration: { QueueConfigurations: [{ QueueArn: hookArn, Events: ['s3:ObjectRemoved:*'] }] } }));
    expect(await ok('admin', 'event', 'target', 'rm', 'two', natsArn)).toContain(`event target ${natsArn} removed`);
    expect((await targets('one')).map((target) => target.arn)).toEqual([envArn, hookArn]);
    await cluster.stop(0);
    await cluster.start(0);
    const afterRestart = await targets('one');
    expect(afterRestart.map((target) => [target.arn, target.source])).toEqual([[envArn, 'environment'], [hookArn, 'api']]);
    expect(afterRestart[1]).toMatchObject({ queueLimit: 500, settings: { ENDPOINT: webhook.url } });
  }, 90_000);
});

describe('event-targets.bin', () => {
  const valid = { version: 1, generation: 3, targets: [{ type: 'webhook', id: 'a', settings: { ENDPOINT: 'http://127.0.0.1/x', AUTH_TOKEN: 't' }, queueLimit: 10 }] };

  it('decodes a valid document and refuses anything else by name', () => {
    expect(validateEventTargets(valid)).toEqual(valid);
    const refused = [
      { ...valid, version: 2 },
      { ...valid, extra: true },
      { ...valid, generation: -1 },
      { ...valid, targets: [{ ...valid.targets[0], colour: 'blue' }] },
      { ...valid, targets: [{ ...valid.targets[0], type: 'kafka' }] },
      { ...valid, targets: [{ ...valid.targets[0], settings: { ENDPOINT: 'ftp://x' } }] },
      { ...valid, targets: [{ ...valid.targets[0], settings: { ENDPOINT: 7 } }] },
      { ...valid, targets: [valid.targets[0], valid.targets[0]] },
      [],
    ];
    for (const document of refused) expect(codeOf(() => validateEventTargets(document)), JSON.stringify(document)).toBe('CorruptFormat');
  });
});
