/**
 * Replication rules without a server: AWS's XML parsed strictly and written back the way it was
 * sent, the bucket record's strict decoder, and which destinations a change goes to (filters,
 * priority, delete markers).
 */
import { describe, expect, it } from 'vitest';
import { parseReplicationConfiguration, replicationConfigurationXml } from '../src/api/s3/replication-xml.js';
import { decodeBucketRecord, encodeBucketRecord, type BucketRecord } from '../src/object/bucket-metadata.js';
import { destinationsOf } from '../src/ops/replication/rules.js';
import { changesOf } from '../src/ops/replication/types.js';
import { codeOf } from './helpers/codes.js';

const known = (arn: string) => arn === 'arn:aws:s3:::copy' || arn === 'arn:aws:s3:::other';
const parse = (xml: string) => parseReplicationConfiguration(Buffer.from(xml), known);


const ruleXml = (inner: string) => `<ReplicationConfiguration><Role>r</Role><Rule>${inner}</Rule></ReplicationConfiguration>`;
const destination = '<Destination><Bucket>arn:aws:s3:::copy</Bucket></Destination>';

describe('ReplicationConfiguration XML', () => {
  it('reads each filter form and writes it back the same way', () => {
    for (const filter of ['<Filter><Prefix>a/</Prefix></Filter>', '<Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter>', '<Filter><And><Prefix>a/</Prefix><Tag><Key>k</Key><Value>v</Value></Tag><Tag><Key>j</Key><Value>w</Value></Tag></And></Filter>', '<Prefix>old/</Prefix>', '']) {
      const configuration = parse(ruleXml(`<ID>x</ID><Priority>3</Priority><Status>Enabled</Status>${filter}${destination}`));
      const again = parse(replicationConfigurationXml(configuration));
      expect(again, filter).toEqual(configuration);
      if (filter !== '') expect(replicationConfigurationXml(configuration).replace(/\s/g, ''), filter).toContain(filter.replace(/\s/g, ''));
    }
  });

  it('refuses by AWS code, naming what is wrong', () => {
    expect(codeOf(() => parse(ruleXml(`<Status>On</Status>${destination}`)))).toBe('MalformedXML');
    expect(codeOf(() => parse(ruleXml(`<Status>Enabled</Status><Surprise/>${destination}`)))).toBe('MalformedXML');
    expect(codeOf(() => parse(ruleXml('<Status>Enabled</Status>')))).toBe('MalformedXML');
    expect(codeOf(() => parse(ruleXml('<Status>Enabled</Status><Destination><Bucket>arn:aws:s3:::nowhere</Bucket></Destination>')))).toBe('InvalidArgument');
    expect(codeOf(() => parse(ruleXml('<Status>Enabled</Status><Destination><Bucket>copy</Bucket></Destination>')))).toBe('InvalidArgument');
    expect(codeOf(() => parse(ruleXml(`<Status>Enabled</Status>${destination.replace('</Bucket>', '</Bucket><StorageClass>GLACIER</StorageClass>')}`)))).toBe('InvalidStorageClass');
    expect(codeOf(() => parse(ruleXml(`<Status>Enabled</Status><Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><DeleteMarkerReplication><Status>Enabled</Status></DeleteMarkerReplication>${destination}`)))).toBe('InvalidRequest');
    const two = `<ReplicationConfiguration><Role/><Rule><ID>a</ID><Priority>1</Priority><Status>Enabled</Status>${destination}</Rule><Rule><ID>b</ID><Priority>1</Priority><Status>Enabled</Status>${destination}</Rule></ReplicationConfiguration>`;
    expect(codeOf(() => parse(two))).toBe('InvalidRequest');
    expect(codeOf(() => parse(two.replace('<ID>b</ID><Priority>1', '<ID>a</ID><Priority>2')))).toBe('InvalidArgument');
  });
});

describe('the bucket record', () => {
  const record: BucketRecord = { version: 1, name: 'b', createdMs: 1, updatedMs: 2, versioning: 'enabled' };

  it('keeps a configuration and refuses a malformed one as CorruptFormat', () => {
    const replication = parse(ruleXml(`<ID>x</ID><Priority>1</Priority><Status>Enabled</Status><Filter><Prefix>p</Prefix></Filter>${destination}`));
    expect(decodeBucketRecord(encodeBucketRecord({ ...record, replication })).replication).toEqual(replication);
    const bad = (value: unknown) => codeOf(() => decodeBucketRecord(Buffer.from(JSON.stringify({ ...record, replication: value }))));
    expect(bad({ role: '', rules: [{ ...replication.rules[0], surprise: 1 }] })).toBe('CorruptFormat');
    expect(bad({ role: '', rules: [{ ...replication.rules[0], priority: 'high' }] })).toBe('CorruptFormat');
    expect(bad({ rules: [] })).toBe('CorruptFormat');
  });
});

describe('destinations of a change', () => {
  const configuration = parse(`<ReplicationConfiguration><Role/>
    <Rule><ID>low</ID><Priority>1</Priority><Status>Enabled</Status><Filter><Prefix></Prefix></Filter><DeleteMarkerReplication><Status>Enabled</Status></DeleteMarkerReplication>${destination}</Rule>
    <Rule><ID>high</ID><Priority>5</Priority><Status>Enabled</Status><Filter><Prefix>logs/</Prefix></Filter><DeleteMarkerReplication><Status>Disabled</Status></DeleteMarkerReplication><Destination><Bucket>arn:aws:s3:::copy</Bucket><StorageClass>REDUCED_REDUNDANCY</StorageClass></Destination></Rule>
    <Rule><ID>tagged</ID><Priority>2</Priority><Status>Enabled</Status><Filter><Tag><Key>ship</Key><Value>yes</Value></Tag></Filter><Destination><Bucket>arn:aws:s3:::other</Bucket></Destination></Rule>
    <Rule><ID>off</ID><Priority>3</Priority><Status>Disabled</Status><Filter><Prefix></Prefix></Filter><Destination><Bucket>arn:aws:s3:::other</Bucket></Destination></Rule>
  </ReplicationConfiguration>`);

  it('the highest-priority matching rule decides per destination; disabled rules and unmatched tags send nothing', () => {
    expect(destinationsOf(configuration, 'photo.jpg', [], 'version')).toEqual([{ bucketArn: 'arn:aws:s3:::copy', ruleId: 'low' }]);
    expect(destinationsOf(configuration, 'logs/1', [], 'version')).toEqual([{ bucketArn: 'arn:aws:s3:::copy', ruleId: 'high', storageClass: 'REDUCED_REDUNDANCY' }]);
    expect(destinationsOf(configuration, 'photo.jpg', [['ship', 'yes']], 'version').map((item) => item.bucketArn)).toEqual(['arn:aws:s3:::copy', 'arn:aws:s3:::other']);
  });

  it('a delete marker goes only where the deciding rule replicates delete markers', () => {
    expect(destinationsOf(configuration, 'photo.jpg', undefined, 'delete-marker').map((item) => item.ruleId)).toEqual(['low']);
    expect(destinationsOf(configuration, 'logs/1', undefined, 'delete-marker')).toEqual([]);
  });

  it('events become changes: new versions, tag changes and delete markers of versioned buckets', () => {
    expect(changesOf([
      { name: 'ObjectCreated:Put', bucket: 'b', key: 'k', versionId: 'v1' },
      { name: 'ObjectTagging:Put', bucket: 'b', key: 'k', versionId: 'v1' },
      { name: 'ObjectRemoved:DeleteMarkerCreated', bucket: 'b', key: 'k', versionId: 'm1' },
      { name: 'ObjectRemoved:Delete', bucket: 'b', key: 'k', versionId: 'v0' },
      { name: 'ObjectCreated:Put', bucket: 'b', key: 'u', versionId: 'null' },
    ])).toEqual([
      { bucket: 'b', key: 'k', versionId: 'v1', kind: 'version' },
      { bucket: 'b', key: 'k', versionId: 'v1', kind: 'version' },
      { bucket: 'b', key: 'k', versionId: 'm1', kind: 'delete-marker' },
    ]);
  });
});
