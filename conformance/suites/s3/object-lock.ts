/**
 * Object lock: a bucket made with it keeps versioning on, retention and legal hold refuse the
 * deletion of a version, a default retention locks new versions, and a bucket without object lock
 * refuses lock settings. Checks leave only GOVERNANCE retention behind (cleanup bypasses it), never
 * COMPLIANCE or a legal hold.
 */
import {
  DeleteObjectCommand,
  GetBucketVersioningCommand,
  GetObjectLockConfigurationCommand,
  GetObjectRetentionCommand,
  HeadObjectCommand,
  PutBucketVersioningCommand,
  PutObjectLegalHoldCommand,
  PutObjectLockConfigurationCommand,
  PutObjectRetentionCommand,
} from '@aws-sdk/client-s3';
import { errorOf, expectThat, type Check } from '../../runner/check.js';
import { expectError, put, textOf } from './support.js';
import { awsApi, s3Tests } from './sources.js';

const dayMs = 24 * 60 * 60 * 1000;

export const objectLockChecks: Check[] = [
  {
    id: 's3.object-lock.bucket',
    spec: 'S3 PutObjectLockConfiguration',
    title: 'a bucket created with object lock reports it, has versioning enabled, refuses to suspend it (409 InvalidBucketState) and refuses a default retention of 0 days (400 InvalidRetentionPeriod)',
    source: `${awsApi('PutObjectLockConfiguration')}; ${s3Tests('test_object_lock_suspend_versioning, test_object_lock_put_obj_lock_invalid_days')}`,
    needs: ['object-lock'],
    async run(target) {
      const bucket = await target.makeBucket('lock-bucket', { objectLock: true });
      const config = await target.s3.send(new GetObjectLockConfigurationCommand({ Bucket: bucket }));
      expectThat(config.ObjectLockConfiguration?.ObjectLockEnabled === 'Enabled', `ObjectLockEnabled is ${String(config.ObjectLockConfiguration?.ObjectLockEnabled)}`);
      const suspend = target.s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Suspended' } }));
      await expectError(suspend, 'InvalidBucketState', 'suspending versioning of an object-lock bucket', 409);
      const versioning = await target.s3.send(new GetBucketVersioningCommand({ Bucket: bucket }));
      expectThat(versioning.Status === 'Enabled', `versioning is ${String(versioning.Status)} after the refused suspension`);
      const zeroDays = target.s3.send(new PutObjectLockConfigurationCommand({ Bucket: bucket, ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'GOVERNANCE', Days: 0 } } } }));
      await expectError(zeroDays, 'InvalidRetentionPeriod', 'a default retention of 0 days', 400);
    },
  },
  {
    id: 's3.object-lock.retention',
    spec: 'S3 PutObjectRetention',
    title: 'a version under GOVERNANCE retention cannot be deleted or have its retention shortened without the bypass (403 AccessDenied), and reads back intact',
    needs: ['object-lock'],
    async run(target) {
      const bucket = await target.makeBucket('lock-retention', { objectLock: true });
      const { VersionId } = await put(target, bucket, 'retained', 'retained data');
      const until = new Date(Math.floor((Date.now() + dayMs) / 1000) * 1000);
      await target.s3.send(new PutObjectRetentionCommand({ Bucket: bucket, Key: 'retained', VersionId, Retention: { Mode: 'GOVERNANCE', RetainUntilDate: until } }));
      const retention = (await target.s3.send(new GetObjectRetentionCommand({ Bucket: bucket, Key: 'retained', VersionId }))).Retention;
      expectThat(retention?.Mode === 'GOVERNANCE' && retention.RetainUntilDate?.getTime() === until.getTime(), `GetObjectRetention answered ${JSON.stringify(retention)}`);
      await expectError(target.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'retained', VersionId })), 'AccessDenied', 'deleting a retained version', 403);
      const shorter = target.s3.send(new PutObjectRetentionCommand({ Bucket: bucket, Key: 'retained', VersionId, Retention: { Mode: 'GOVERNANCE', RetainUntilDate: new Date(until.getTime() - dayMs / 2) } }));
      await expectError(shorter, 'AccessDenied', 'shortening GOVERNANCE retention without the bypass', 403);
      expectThat((await textOf(target, bucket, 'retained', VersionId)) === 'retained data', 'the retained version changed');
      const marker = await target.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'retained' }));
      expectThat(marker.DeleteMarker === true, 'a delete without a version id did not add a delete marker');
      await target.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'retained', VersionId, BypassGovernanceRetention: true }));
    },
  },
  {
    id: 's3.object-lock.legal-hold',
    spec: 'S3 PutObjectLegalHold',
    title: 'a version under legal hold cannot be deleted even with the governance bypass; once OFF it can',
    needs: ['object-lock'],
    async run(target) {
      const bucket = await target.makeBucket('lock-hold', { objectLock: true });
      const { VersionId } = await put(target, bucket, 'held', 'held data');
      await target.s3.send(new PutObjectLegalHoldCommand({ Bucket: bucket, Key: 'held', VersionId, LegalHold: { Status: 'ON' } }));
      try {
        const head = await target.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'held', VersionId }));
        expectThat(head.ObjectLockLegalHoldStatus === 'ON', `HEAD reports legal hold ${String(head.ObjectLockLegalHoldStatus)}`);
        const bypassed = target.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'held', VersionId, BypassGovernanceRetention: true }));
        await expectError(bypassed, 'AccessDenied', 'deleting a version under legal hold', 403);
        expectThat((await textOf(target, bucket, 'held', VersionId)) === 'held data', 'the held version changed');
      } finally {
        await target.s3.send(new PutObjectLegalHoldCommand({ Bucket: bucket, Key: 'held', VersionId, LegalHold: { Status: 'OFF' } }));
      }
      await target.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'held', VersionId }));
    },
  },
  {
    id: 's3.object-lock.default-retention',
    spec: 'S3 PutObjectLockConfiguration',
    title: 'a default retention gives a new version without lock headers its mode and a date that far ahead',
    needs: ['object-lock'],
    async run(target) {
      const bucket = await target.makeBucket('lock-default', { objectLock: true });
      await target.s3.send(new PutObjectLockConfigurationCommand({ Bucket: bucket, ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'GOVERNANCE', Days: 1 } } } }));
      const before = Date.now();
      await put(target, bucket, 'defaulted', 'defaulted');
      const head = await target.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'defaulted' }));
      const until = head.ObjectLockRetainUntilDate?.getTime() ?? 0;
      expectThat(head.ObjectLockMode === 'GOVERNANCE', `the new version's mode is ${String(head.ObjectLockMode)}`);
      expectThat(Math.abs(until - (before + dayMs)) < 10 * 60_000, `the new version is retained until ${new Date(until).toISOString()}, not a day from now`);
    },
  },
  {
    id: 's3.object-lock.needs-lock-bucket',
    spec: 'S3 PutObjectRetention',
    title: 'retention and lock headers on a bucket without object lock are refused (400 InvalidRequest) and store nothing',
    needs: ['object-lock'],
    async run(target) {
      const bucket = await target.makeBucket('lock-none');
      await put(target, bucket, 'plain', 'plain');
      const retention = target.s3.send(new PutObjectRetentionCommand({ Bucket: bucket, Key: 'plain', Retention: { Mode: 'GOVERNANCE', RetainUntilDate: new Date(Date.now() + dayMs) } }));
      await expectError(retention, 'InvalidRequest', 'PutObjectRetention on a bucket without object lock', 400);
      await expectError(put(target, bucket, 'plain', 'replaced', { ObjectLockLegalHoldStatus: 'ON' }), 'InvalidRequest', 'a PUT with a legal hold header on a bucket without object lock', 400);
      expectThat((await textOf(target, bucket, 'plain')) === 'plain', 'the refused PUT replaced the object');
      const config = await errorOf(target.s3.send(new GetObjectLockConfigurationCommand({ Bucket: bucket })));
      expectThat(config.name === 'ObjectLockConfigurationNotFoundError' && config.status === 404, `GetObjectLockConfiguration answered ${config.name} (${config.status})`);
    },
  },
];
