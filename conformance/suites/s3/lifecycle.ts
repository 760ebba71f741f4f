/** Bucket lifecycle configuration: stored and returned as sent, removed, and refused with AWS's error names. */
import { DeleteBucketLifecycleCommand, GetBucketLifecycleConfigurationCommand, PutBucketLifecycleConfigurationCommand, type LifecycleRule } from '@aws-sdk/client-s3';
import { expectThat, type Check, type Target } from '../../runner/check.js';
import { expectError, expectRawError } from './support.js';
import { awsApi } from './sources.js';

const rules: LifecycleRule[] = [
  { ID: 'logs', Status: 'Enabled', Filter: { Prefix: 'logs/' }, Expiration: { Days: 30 } },
  { ID: 'versions', Status: 'Enabled', Filter: { And: { Prefix: 'docs/', Tags: [{ Key: 'class', Value: 'temp' }], ObjectSizeGreaterThan: 100 } }, NoncurrentVersionExpiration: { NoncurrentDays: 7, NewerNoncurrentVersions: 2 } },
  { ID: 'uploads', Status: 'Disabled', Filter: { Prefix: '' }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 3 } },
];

/**
 * One rule in a normal form, so that what a server may rewrite without changing its meaning
 * compares equal: a missing or empty Filter, an empty Prefix and the older rule-level Prefix are
 * one filter; an And of one condition is that condition; tags in any order; rules in any order.
 */
export function normalRule(rule: LifecycleRule): Record<string, unknown> {
  const { Prefix: rulePrefix, Filter, ...rest } = rule as LifecycleRule & { Prefix?: string };
  let filter: Record<string, unknown> = { ...(Filter ?? {}) };
  if (Object.keys(filter).length === 0 && rulePrefix !== undefined) filter = { Prefix: rulePrefix };
  const and = filter.And as Record<string, unknown> | undefined;
  if (and) {
    const conditions = Object.entries(and).filter(([name, value]) => value !== undefined && !(name === 'Prefix' && value === '') && !(name === 'Tags' && Array.isArray(value) && value.length === 0));
    const tags = conditions.find(([name]) => name === 'Tags')?.[1] as { Key?: string; Value?: string }[] | undefined;
    if (conditions.length === 1 && !(tags && tags.length > 1)) filter = tags ? { Tag: tags[0] } : Object.fromEntries(conditions);
    else filter = { And: Object.fromEntries(conditions.map(([name, value]) => [name, name === 'Tags' ? [...(value as { Key?: string }[])].sort((a, b) => String(a.Key).localeCompare(String(b.Key))) : value])) };
  }
  if (filter.Prefix === '' || Object.keys(filter).length === 0) filter = {};
  return { ...rest, Filter: filter };
}

/** The stored rules in normal form (see `normalRule`), sorted by ID. */
async function storedRules(target: Target, bucket: string): Promise<string> {
  const answer = await target.s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }));
  return normalRules(answer.Rules ?? []);
}

export function normalRules(list: LifecycleRule[]): string {
  return canonical(list.map(normalRule).sort((a, b) => String(a.ID).localeCompare(String(b.ID))));
}

/** JSON with every object's keys sorted (the order of XML elements is not part of the answer). */
export function canonical(value: unknown): string {
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
    title: 'a lifecycle configuration reads back with the meaning it was put with (IDs, filters, actions; a normalised form allowed) and is gone after DeleteBucketLifecycle',
    source: `${awsApi('GetBucketLifecycleConfiguration')}; ${awsApi('DeleteBucketLifecycle')}`,
    async run(target) {
      const bucket = await target.makeBucket('lifecycle');
      await expectError(target.s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket })), 'NoSuchLifecycleConfiguration', 'GetBucketLifecycleConfiguration before any was put', 404);
      await target.s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: bucket, LifecycleConfiguration: { Rules: rules } }));
      const stored = await storedRules(target, bucket);
      expectThat(stored === normalRules(rules), `the stored rules differ from those put: ${stored}, expected ${normalRules(rules)}`);
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
      expectThat((await storedRules(target, bucket)) === normalRules(rules.slice(0, 1)), 'a refused configuration changed the stored one');
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
