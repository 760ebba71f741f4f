/**
 * Bucket notification configurations through the AWS SDK: put and read back in AWS's XML (queue,
 * topic and function rules, prefix and suffix filters, generated ids), replaced whole and
 * removed by an empty configuration; a rule naming a target the deployment does not have is
 * InvalidArgument ("Unable to validate the following destination configurations"), so are
 * unknown events, overlapping rules and doubled filter rules; malformed XML is MalformedXML; a
 * refused Put changes nothing. The targets come from SVC_NOTIFY_* (their brokers need not be up
 * for configuration).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetBucketNotificationConfigurationCommand, PutBucketNotificationConfigurationCommand, type NotificationConfiguration, type QueueConfiguration, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { signedRequest, type RawResponse } from './helpers/raw-s3.js';
import { sdkErrorOf } from './helpers/codes.js';

let root: string;
let server: SvcProcess;
let s3: S3Client;

const webhookArn = 'arn:svc:sqs::primary:webhook';
const natsArn = 'arn:svc:sqs::1:nats';

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-notify-config-'));
  server = await startSvc({
    args: [join(root, 'd{1...4}')],
    env: {
      SVC_NOTIFY_WEBHOOK_ENABLE_primary: 'on',
      SVC_NOTIFY_WEBHOOK_ENDPOINT_primary: 'http://127.0.0.1:9/hook',
      SVC_NOTIFY_WEBHOOK_AUTH_TOKEN_primary: 'hook-secret',
      SVC_NOTIFY_NATS_ENABLE_1: 'on',
      SVC_NOTIFY_NATS_ADDRESS_1: '127.0.0.1:9',
      SVC_NOTIFY_NATS_SUBJECT_1: 'bucketevents',
    },
  });
  s3 = s3ClientFor(server.url);
  await s3.send(new CreateBucketCommand({ Bucket: 'photos' }));
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

const put = (configuration: NotificationConfiguration): Promise<unknown> => s3.send(new PutBucketNotificationConfigurationCommand({ Bucket: 'photos', NotificationConfiguration: configuration }));
const get = async (): Promise<NotificationConfiguration> => {
  const { $metadata: _metadata, ...configuration } = await s3.send(new GetBucketNotificationConfigurationCommand({ Bucket: 'photos' }));
  return configuration;
};
const rawPut = (body: string): Promise<RawResponse> => signedRequest(server.url, { method: 'PUT', path: '/photos', query: { notification: '' }, body });

describe('notification configuration', () => {
  it('is empty until put, then read back as sent', async () => {
    expect(await get()).toEqual({});
    await put({
      QueueConfigurations: [{ Id: 'thumbs', QueueArn: webhookArn, Events: ['s3:ObjectCreated:*'], Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'images/' }, { Name: 'suffix', Value: '.jpg' }] } } }],
      TopicConfigurations: [{ Id: 'index', TopicArn: natsArn, Events: ['s3:ObjectRemoved:Delete', 's3:ObjectTagging:*'] }],
      LambdaFunctionConfigurations: [{ LambdaFunctionArn: natsArn, Events: ['s3:ObjectCreated:Put'], Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'docs/' }] } } }],
    });
    const configuration = await get();
    expect(configuration.QueueConfigurations).toEqual([{ Id: 'thumbs', QueueArn: webhookArn, Events: ['s3:ObjectCreated:*'], Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'images/' }, { Name: 'suffix', Value: '.jpg' }] } } }]);
    expect(configuration.TopicConfigurations).toEqual([{ Id: 'index', TopicArn: natsArn, Events: ['s3:ObjectRemoved:Delete', 's3:ObjectTagging:*'] }]);
    expect(configuration.LambdaFunctionConfigurations).toHaveLength(1);
    expect(configuration.LambdaFunctionConfigurations![0]!.Id).toMatch(/^[0-9a-f]{32}$/);
    // The stored configuration never shows a target's secret.
    const text = (await signedRequest(server.url, { method: 'GET', path: '/photos', query: { notification: '' } })).body;
    expect(text).not.toContain('hook-secret');
  });

  it('is replaced whole, and an empty configuration removes every rule', async () => {
    await put({ QueueConfigurations: [{ Id: 'only', QueueArn: webhookArn, Events: ['s3:ObjectRemoved:*'] }] });
    expect(await get()).toEqual({ QueueConfigurations: [{ Id: 'only', QueueArn: webhookArn, Events: ['s3:ObjectRemoved:*'] }] });
    await put({});
    expect(await get()).toEqual({});
  });

  it('refuses a destination the deployment does not have, unknown events and overlapping rules, changing nothing', async () => {
    await put({ QueueConfigurations: [{ Id: 'kept', QueueArn: webhookArn, Events: ['s3:ObjectCreated:*'] }] });
    const unknownArn = await rawPut(`<NotificationConfiguration><QueueConfiguration><Queue>arn:svc:sqs::9:redis</Queue><Event>s3:ObjectCreated:*</Event></QueueConfiguration></NotificationConfiguration>`);
    expect(unknownArn.status).toBe(400);
    const body = unknownArn.body;
    expect(body).toContain('<Code>InvalidArgument</Code>');
    expect(body).toContain('Unable to validate the following destination configurations');
    expect(await sdkErrorOf(put({ QueueConfigurations: [{ QueueArn: webhookArn, Events: ['s3:ObjectRestore:*'] }] }))).toEqual({ name: 'InvalidArgument', status: 400 });
    const overlapping: { QueueConfigurations: QueueConfiguration[] } = {
      QueueConfigurations: [
        { Id: 'a', QueueArn: webhookArn, Events: ['s3:ObjectCreated:*'], Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'images/' }] } } },
        { Id: 'b', QueueArn: natsArn, Events: ['s3:ObjectCreated:Put'], Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'images/raw/' }] } } },
      ],
    };
    expect(await sdkErrorOf(put(overlapping))).toEqual({ name: 'InvalidArgument', status: 400 });
    // Different events, or prefixes that never meet, do not overlap.
    await put({ ...overlapping, QueueConfigurations: [overlapping.QueueConfigurations[0]!, { ...overlapping.QueueConfigurations[1]!, Events: ['s3:ObjectRemoved:*'] }] });
    await put({ QueueConfigurations: [{ Id: 'kept', QueueArn: webhookArn, Events: ['s3:ObjectCreated:*'] }] });
    const doubled = await rawPut(`<NotificationConfiguration><QueueConfiguration><Queue>${webhookArn}</Queue><Event>s3:ObjectCreated:*</Event><Filter><S3Key><FilterRule><Name>prefix</Name><Value>a</Value></FilterRule><FilterRule><Name>prefix</Name><Value>b</Value></FilterRule></S3Key></Filter></QueueConfiguration></NotificationConfiguration>`);
    expect([doubled.status, doubled.body.includes('InvalidArgument')]).toEqual([400, true]);
    expect(await get()).toEqual({ QueueConfigurations: [{ Id: 'kept', QueueArn: webhookArn, Events: ['s3:ObjectCreated:*'] }] });
  });

  it('answers MalformedXML for a body that is not a configuration', async () => {
    for (const body of ['<NotificationConfiguration><QueueConfiguration>', '<Other/>', `<NotificationConfiguration><QueueConfiguration><Queue>${webhookArn}</Queue></QueueConfiguration></NotificationConfiguration>`, `<NotificationConfiguration><QueueConfiguration><Queue>${webhookArn}</Queue><Event>s3:ObjectCreated:*</Event><Color>red</Color></QueueConfiguration></NotificationConfiguration>`]) {
      const answer = await rawPut(body);
      expect([answer.status, answer.body.match(/<Code>(\w+)<\/Code>/)?.[1]]).toEqual([400, 'MalformedXML']);
    }
    expect(await get()).toEqual({ QueueConfigurations: [{ Id: 'kept', QueueArn: webhookArn, Events: ['s3:ObjectCreated:*'] }] });
  });
});
