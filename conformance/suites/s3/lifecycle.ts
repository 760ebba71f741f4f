/** Bucket lifecycle configuration: stored and returned as sent, removed, and refused with AWS's error names. */
import { DeleteBucketLifecycleCommand, GetBucketLifecycleConfigurationCommand, PutBucketLifecycleConfigurationCommand, type LifecycleRule } from '@aws-sdk/client-s3';
import { expectThat, type Check, type Target } from '../../runner/check.js';
import { expectError, expectRawError } from './support.js';

const rules: LifecycleRule[] = [
  { ID: 'logs', Status: 'Enabled', Filter: { Prefix: 'logs/' }, Expiration: { Days: 30 } },
  { ID: 'versions', Status: 'Enabled', Filter: { And: { Prefix: 'docs/', Tags: [{ Key: 'class', Value: 'temp' }], ObjectSizeGreaterThan: 100 } }, NoncurrentVersionExpiration: { NoncurrentDays: 7, NewerNoncurrentVersions: 2 } },
  { ID: 'uploads', Status: 'Disabled', Filter: { Prefix: '' }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 3 } },
];

/** The stored rules, compared field by field with what was sent (an empty Prefix may come back as an empty Filter). */
async function storedRules(target: Target, bucket: string): Promise<string> {
  const answer = await target.s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }));
  return canonical((answer.Rules ?? []).map((rule) => ({ ...rule, Filter: rule.Filter && Object.keys(rule.Filter).length > 0 ? rule.Filter : { Prefix: '' } })));
}

/** JSON with every object's keys sorted (the order of XML elements is not part of the answer). */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, field: unknown) => (field && typeof field === 'object' && !Array.isArray(field) ? Object.fromEntries(Object.entries(field).sort(([a], [b]) => (a < b ? -1 : 1))) : field));
}

const refusals: [string, string, string][] = [
  ['zero-days', '<Expiration><Days>0</Days></Expiration>', 'InvalidArgument'],
  ['date-not-midnight', '<Expiration><Date>2040-01-01T12:00:00Z</Date></Expiration>', 'InvalidArgument'],
  ['no-action', '', 'InvalidRequest'],
];

export const lifecycleChecks: Check[] = [
  {
    id: 's3.lifecycle.put-get-delete',
    spec: 'S3 PutBucketLifecycleConfiguration',
    title: 'a lifecycle configuration reads back as put (IDs, filters, actions) and is gone after DeleteBucketLifecycle',
    async run(target) {
      const bucket = await target.makeBucket('lifecycle');
      await expectError(target.s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket })), 'NoSuchLifecycleConfiguration', 'GetBucketLifecycleConfiguration before any was put', 404);
      await target.s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: bucket, LifecycleConfiguration: { Rules: rules } }));
      const stored = await storedRules(target, bucket);
      expectThat(stored === canonical(rules), `the stored rules differ from those put: ${stored}`);
      await target.s3.send(new DeleteBucketLifecycleCommand({ Bucket: bucket }));
      await expectError(target.s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket })), 'NoSuchLifecycleConfiguration', 'GetBucketLifecycleConfiguration after DeleteBucketLifecycle', 404);
    },
  },
  {
    id: 's3.lifecycle.missing-bucket',
    spec: 'S3 GetBucketLifecycleConfiguration',
    title: 'the lifecycle configuration of a bucket that does not exist answers NoSuchBucket',
    async run(target) {
      await expectError(target.s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: target.bucketName('never-made') })), 'NoSuchBucket', 'GetBucketLifecycleConfiguration of a missing bucket', 404);
    },
  },
  {
    id: 's3.lifecycle.malformed',
    spec: 'S3 PutBucketLifecycleConfiguration',
    title: 'a lifecycle document that is not well-formed is refused with MalformedXML and the stored configuration stays',
    async run(target) {
      const bucket = await target.makeBucket('lifecycle-malformed');
      await target.s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: bucket, LifecycleConfiguration: { Rules: rules.slice(0, 1) } }));
      const answer = await target.raw({ method: 'PUT', path: `/${bucket}`, query: { lifecycle: '' }, body: '<LifecycleConfiguration><Rule><ID>x</ID>' });
      expectRawError(answer, 400, 'MalformedXML', 'PutBucketLifecycleConfiguration with a truncated document');
      expectThat((await storedRules(target, bucket)) === canonical(rules.slice(0, 1)), 'a refused configuration changed the stored one');
    },
  },
  ...refusals.map(([name, action, code]): Check => ({
    id: `s3.lifecycle.refused.${name}`,
    spec: 'S3 PutBucketLifecycleConfiguration',
    title: `a rule with ${name.replace(/-/g, ' ')} is refused with ${code}`,
    async run(target) {
      const bucket = await target.makeBucket('lifecycle-refused');
      const body = `<LifecycleConfiguration><Rule><ID>r</ID><Filter><Prefix></Prefix></Filter><Status>Enabled</Status>${action}</Rule></LifecycleConfiguration>`;
      const answer = await target.raw({ method: 'PUT', path: `/${bucket}`, query: { lifecycle: '' }, body });
      expectRawError(answer, 400, code, `PutBucketLifecycleConfiguration with ${name}`);
      await expectError(target.s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket })), 'NoSuchLifecycleConfiguration', 'GetBucketLifecycleConfiguration after a refused put', 404);
    },
  })),
];
