/**
 * ReplicationConfiguration XML (Put/GetBucketReplication): a Role and one or more Rules, each with
 * an optional ID, a Priority, a Status, a Filter (Prefix, Tag, or And of both) or the older
 * rule-level Prefix, DeleteMarkerReplication, ExistingObjectReplication and a Destination whose
 * Bucket is `arn:aws:s3:::<bucket>` (or a remote target's ARN) with an optional StorageClass and,
 * for rules whose SourceSelectionCriteria enable SseKmsEncryptedObjects, an EncryptionConfiguration
 * naming the target's KMS key (ReplicaKmsKeyID): the one requires the other, as S3 has it.
 */
import { createHash } from 'node:crypto';
import { SvcError } from '../../errors/index.js';
import type { ReplicationConfiguration, ReplicationRule } from '../../object/index.js';
import { limits } from '../../util/limits.js';
import { parseXmlBody, toXml } from './xml.js';

const malformed = (message: string): SvcError => new SvcError('MalformedXML', message);
const ruleElements = ['ID', 'Priority', 'Status', 'Filter', 'Prefix', 'DeleteMarkerReplication', 'ExistingObjectReplication', 'Destination', 'SourceSelectionCriteria'];

/**
 * The configuration of a PutBucketReplication body. `destinationKnown` tells whether a rule's
 * destination bucket ARN is served by a remote target of this bucket: a rule naming another is
 * refused with InvalidArgument.
 */
export function parseReplicationConfiguration(body: Uint8Array, destinationKnown: (bucketArn: string) => boolean): ReplicationConfiguration {
  const parsed = parseXmlBody(body, ['Rule', 'Tag']);
  const root = parsed.ReplicationConfiguration;
  if (typeof root !== 'object' || root === null) throw malformed('The body must be a ReplicationConfiguration with a Role and at least one Rule.');
  const given = root as Record<string, unknown>;
  const unknown = Object.keys(given).find((name) => name !== 'Role' && name !== 'Rule');
  if (unknown !== undefined) throw malformed(`A ReplicationConfiguration has no element ${unknown}.`);
  const role = given.Role === undefined ? '' : given.Role;
  if (typeof role !== 'string') throw malformed('Role must be text.');
  const entries = (given.Rule as unknown[] | undefined) ?? [];
  if (entries.length === 0) throw malformed('A ReplicationConfiguration needs at least one Rule.');
  if (entries.length > limits.maxReplicationRules) throw new SvcError('InvalidRequest', `A replication configuration holds at most ${limits.maxReplicationRules} rules.`);
  const rules = entries.map(ruleOf);
  checkDistinct(rules);
  const unknownDestination = rules.find((rule) => !destinationKnown(rule.destination.bucketArn));
  if (unknownDestination) {
    throw new SvcError('InvalidArgument', `The destination ${unknownDestination.destination.bucketArn} is not a remote target of this bucket: add it first (rc admin replicate add).`, { argumentName: 'Destination' });
  }
  return { role, rules };
}

function ruleOf(entry: unknown): ReplicationRule {
  if (typeof entry !== 'object' || entry === null) throw malformed('A Rule must hold a Status and a Destination.');
  const fields = entry as Record<string, unknown>;
  const extra = Object.keys(fields).find((name) => !ruleElements.includes(name));
  if (extra !== undefined) throw malformed(`A replication Rule has no element ${extra}.`);
  const status = fields.Status;
  if (status !== 'Enabled' && status !== 'Disabled') throw malformed('A Rule\'s Status must be Enabled or Disabled.');
  if (fields.Filter !== undefined && fields.Prefix !== undefined) throw malformed('A Rule has either a Filter or a Prefix, not both.');
  const { filter, filterForm } = fields.Prefix !== undefined ? { filter: { prefix: textOf(fields.Prefix, 'Prefix') }, filterForm: 'rulePrefix' as const } : filterOf(fields.Filter);
  const priority = fields.Priority === undefined ? 0 : Number(textOf(fields.Priority, 'Priority'));
  if (!Number.isInteger(priority) || priority < 0) throw malformed('Priority must be a whole number, 0 or more.');
  const deleteMarkerReplication = statusOf(fields.DeleteMarkerReplication, 'DeleteMarkerReplication');
  if (deleteMarkerReplication && filter.tags !== undefined) throw new SvcError('InvalidRequest', 'Delete marker replication is not supported if any Tag filter is specified.');
  const existingObjectReplication = statusOf(fields.ExistingObjectReplication, 'ExistingObjectReplication');
  const destination = destinationOf(fields.Destination);
  const sseKmsEncryptedObjects = sourceSelectionOf(fields.SourceSelectionCriteria);
  if (sseKmsEncryptedObjects === true && destination.replicaKmsKeyId === undefined) {
    throw new SvcError('InvalidRequest', 'A rule that replicates SSE-KMS objects (SseKmsEncryptedObjects Enabled) must name the destination\'s key in Destination/EncryptionConfiguration/ReplicaKmsKeyID.');
  }
  if (sseKmsEncryptedObjects !== true && destination.replicaKmsKeyId !== undefined) {
    throw new SvcError('InvalidRequest', 'A Destination\'s EncryptionConfiguration is only valid in a rule whose SourceSelectionCriteria enable SseKmsEncryptedObjects.');
  }
  const id = fields.ID === undefined || fields.ID === '' ? generatedId(filter, destination) : textOf(fields.ID, 'ID');
  if (id.length > 255) throw new SvcError('InvalidArgument', 'A rule ID is at most 255 characters long.', { argumentName: 'ID' });
  return { id, priority, enabled: status === 'Enabled', filter, ...(filterForm ? { filterForm } : {}), deleteMarkerReplication, existingObjectReplication, destination, ...(sseKmsEncryptedObjects !== undefined ? { sseKmsEncryptedObjects } : {}) };
}

/**
 * `<SourceSelectionCriteria><SseKmsEncryptedObjects><Status>` (absent: undefined). ReplicaModifications
 * may be sent Disabled only: changes made to replicas are never replicated back.
 */
function sourceSelectionOf(value: unknown): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === '') return false;
  if (typeof value !== 'object' || value === null) throw malformed('SourceSelectionCriteria holds SseKmsEncryptedObjects and ReplicaModifications.');
  const fields = value as Record<string, unknown>;
  const extra = Object.keys(fields).find((name) => name !== 'SseKmsEncryptedObjects' && name !== 'ReplicaModifications');
  if (extra !== undefined) throw malformed(`SourceSelectionCriteria has no element ${extra}.`);
  if (statusOf(fields.ReplicaModifications, 'ReplicaModifications')) throw new SvcError('NotImplemented', 'ReplicaModifications is not supported: changes made to replicas are not replicated back.');
  return statusOf(fields.SseKmsEncryptedObjects, 'SseKmsEncryptedObjects');
}

/** `<EncryptionConfiguration><ReplicaKmsKeyID>`: a key id of the target's KMS (1 to 256 characters, no spaces). */
function replicaKeyOf(value: unknown): string {
  const fields = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  const extra = Object.keys(fields).find((name) => name !== 'ReplicaKmsKeyID');
  if (extra !== undefined) throw malformed(`EncryptionConfiguration has no element ${extra}.`);
  const keyId = textOf(fields.ReplicaKmsKeyID, 'ReplicaKmsKeyID');
  if (!/^\S{1,256}$/.test(keyId)) throw new SvcError('InvalidArgument', 'ReplicaKmsKeyID must name a key of the destination\'s KMS (1 to 256 characters, no spaces).', { argumentName: 'ReplicaKmsKeyID' });
  return keyId;
}

function textOf(value: unknown, name: string): string {
  if (value === '' || value === undefined) return '';
  if (typeof value !== 'string') throw malformed(`${name} must be text.`);
  return value;
}

/** `<X><Status>Enabled|Disabled</Status></X>`; absent: disabled. */
function statusOf(value: unknown, name: string): boolean {
  if (value === undefined) return false;
  const status = typeof value === 'object' && value !== null ? (value as Record<string, unknown>).Status : undefined;
  if (status !== 'Enabled' && status !== 'Disabled') throw malformed(`${name} needs a Status of Enabled or Disabled.`);
  return status === 'Enabled';
}

function filterOf(value: unknown): { filter: ReplicationRule['filter']; filterForm?: ReplicationRule['filterForm'] } {
  if (value === undefined) return { filter: {}, filterForm: 'none' };
  if (value === '') return { filter: {} };
  if (typeof value !== 'object' || value === null) throw malformed('A Filter holds a Prefix, a Tag or an And.');
  const fields = value as Record<string, unknown>;
  const names = Object.keys(fields);
  if (names.some((name) => !['Prefix', 'Tag', 'And'].includes(name)) || names.length > 1) throw malformed('A Filter holds one of Prefix, Tag or And.');
  if (fields.And !== undefined) {
    const and = typeof fields.And === 'object' && fields.And !== null ? (fields.And as Record<string, unknown>) : {};
    if (Object.keys(and).some((name) => name !== 'Prefix' && name !== 'Tag')) throw malformed('An And holds a Prefix and Tags.');
    const tags = tagsOf(and.Tag);
    return { filter: { ...(and.Prefix !== undefined ? { prefix: textOf(and.Prefix, 'Prefix') } : {}), ...(tags.length > 0 ? { tags } : {}) }, filterForm: 'and' };
  }
  if (fields.Tag !== undefined) {
    const tags = tagsOf(fields.Tag);
    if (tags.length !== 1) throw malformed('A Filter holds one Tag; use And for several.');
    return { filter: { tags } };
  }
  return { filter: { prefix: textOf(fields.Prefix, 'Prefix') } };
}

function tagsOf(value: unknown): { key: string; value: string }[] {
  const tags = ((value as unknown[] | undefined) ?? []).map((tag) => {
    const fields = (typeof tag === 'object' && tag !== null ? tag : {}) as Record<string, unknown>;
    if (typeof fields.Key !== 'string' || fields.Key === '') throw malformed('A Tag needs a Key and a Value.');
    return { key: fields.Key, value: textOf(fields.Value, 'Value') };
  });
  if (new Set(tags.map((tag) => tag.key)).size !== tags.length) throw new SvcError('InvalidArgument', 'A filter names each tag key once.', { argumentName: 'Tag' });
  return tags;
}

function destinationOf(value: unknown): ReplicationRule['destination'] {
  if (typeof value !== 'object' || value === null) throw malformed('A Rule needs a Destination with a Bucket.');
  const fields = value as Record<string, unknown>;
  const extra = Object.keys(fields).find((name) => name !== 'Bucket' && name !== 'StorageClass' && name !== 'EncryptionConfiguration');
  if (extra !== undefined) throw new SvcError('NotImplemented', `A replication Destination's ${extra} is not supported: name a Bucket, an optional StorageClass and EncryptionConfiguration.`);
  const bucketArn = textOf(fields.Bucket, 'Bucket');
  if (!/^arn:aws:s3:::[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucketArn) && !/^arn:svc:replication::[A-Za-z0-9-]+:[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucketArn)) {
    throw new SvcError('InvalidArgument', `The destination bucket must be given as arn:aws:s3:::<bucket>, not '${bucketArn}'.`, { argumentName: 'Bucket' });
  }
  const storageClass = fields.StorageClass === undefined ? undefined : textOf(fields.StorageClass, 'StorageClass');
  if (storageClass !== undefined && storageClass !== 'STANDARD' && storageClass !== 'REDUCED_REDUNDANCY') {
    throw new SvcError('InvalidStorageClass', `The storage class '${storageClass}' is not valid: only STANDARD and REDUCED_REDUNDANCY are accepted.`, { storageClass });
  }
  const replicaKmsKeyId = fields.EncryptionConfiguration === undefined ? undefined : replicaKeyOf(fields.EncryptionConfiguration);
  return { bucketArn, ...(storageClass !== undefined ? { storageClass } : {}), ...(replicaKmsKeyId !== undefined ? { replicaKmsKeyId } : {}) };
}

function generatedId(filter: ReplicationRule['filter'], destination: ReplicationRule['destination']): string {
  return createHash('sha256').update(JSON.stringify([filter, destination])).digest('hex').slice(0, 32);
}

function checkDistinct(rules: ReplicationRule[]): void {
  if (new Set(rules.map((rule) => rule.id)).size !== rules.length) throw new SvcError('InvalidArgument', 'Two replication rules have the same ID.', { argumentName: 'ID' });
  if (rules.length > 1 && new Set(rules.map((rule) => rule.priority)).size !== rules.length) {
    throw new SvcError('InvalidRequest', 'Found duplicate priority: each replication rule needs its own Priority.');
  }
}

export function replicationConfigurationXml(configuration: ReplicationConfiguration): string {
  return toXml('ReplicationConfiguration', {
    Role: configuration.role,
    Rule: configuration.rules.map((rule) => ({
      ID: rule.id,
      Priority: rule.priority,
      Status: rule.enabled ? 'Enabled' : 'Disabled',
      ...filterXml(rule),
      ...(rule.sseKmsEncryptedObjects !== undefined ? { SourceSelectionCriteria: { SseKmsEncryptedObjects: { Status: rule.sseKmsEncryptedObjects ? 'Enabled' : 'Disabled' } } } : {}),
      DeleteMarkerReplication: { Status: rule.deleteMarkerReplication ? 'Enabled' : 'Disabled' },
      ExistingObjectReplication: { Status: rule.existingObjectReplication ? 'Enabled' : 'Disabled' },
      Destination: {
        Bucket: rule.destination.bucketArn,
        ...(rule.destination.storageClass !== undefined ? { StorageClass: rule.destination.storageClass } : {}),
        ...(rule.destination.replicaKmsKeyId !== undefined ? { EncryptionConfiguration: { ReplicaKmsKeyID: rule.destination.replicaKmsKeyId } } : {}),
      },
    })),
  });
}

function filterXml(rule: ReplicationRule): Record<string, unknown> {
  const { prefix, tags } = rule.filter;
  const tagXml = (tag: { key: string; value: string }) => ({ Key: tag.key, Value: tag.value });
  if (rule.filterForm === 'rulePrefix') return { Prefix: prefix ?? '' };
  if (rule.filterForm === 'none') return {};
  if (rule.filterForm === 'and') return { Filter: { And: { ...(prefix !== undefined ? { Prefix: prefix } : {}), ...(tags ? { Tag: tags.map(tagXml) } : {}) } } };
  if (tags !== undefined) return { Filter: { Tag: tagXml(tags[0]!) } };
  return { Filter: prefix !== undefined ? { Prefix: prefix } : '' };
}
