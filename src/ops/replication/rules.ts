/** Which replication rules a change matches, and where each matching destination sends it (docs/replication.md). */
import type { ReplicationConfiguration, ReplicationRule } from '../../object/index.js';

/** One destination a change goes to: the rule that sends it there (the highest priority of those matching). */
export interface Destination {
  bucketArn: string;
  storageClass?: string;
  ruleId: string;
  /** The target's KMS key for SSE-KMS versions (the rule enables SseKmsEncryptedObjects). */
  replicaKmsKeyId?: string;
}

/** Whether a rule's filter holds for a key with these tags (`tags` undefined when they were not read: only prefix rules then). */
export function ruleMatches(rule: ReplicationRule, key: string, tags: [string, string][] | undefined): boolean {
  if (!rule.enabled) return false;
  if (rule.filter.prefix !== undefined && !key.startsWith(rule.filter.prefix)) return false;
  if (rule.filter.tags === undefined) return true;
  return tags !== undefined && rule.filter.tags.every((wanted) => tags.some(([name, value]) => name === wanted.key && value === wanted.value));
}

/** Whether any enabled rule filters on tags (the version's tags must then be read). */
export function needsTags(configuration: ReplicationConfiguration): boolean {
  return configuration.rules.some((rule) => rule.enabled && rule.filter.tags !== undefined);
}

/**
 * The destinations of a change: for a version, every destination of a matching rule; for a
 * delete marker, those whose deciding rule has DeleteMarkerReplication enabled. An SSE-KMS version
 * (`encryption` its kind) goes only where the deciding rule enables SseKmsEncryptedObjects, as S3
 * selects them.
 */
export function destinationsOf(configuration: ReplicationConfiguration, key: string, tags: [string, string][] | undefined, kind: 'version' | 'delete-marker', encryption?: string): Destination[] {
  const deciding = new Map<string, ReplicationRule>();
  for (const rule of configuration.rules) {
    if (!ruleMatches(rule, key, tags)) continue;
    const current = deciding.get(rule.destination.bucketArn);
    if (!current || rule.priority > current.priority) deciding.set(rule.destination.bucketArn, rule);
  }
  return [...deciding.values()]
    .filter((rule) => (kind === 'version' ? encryption !== 'SSE-KMS' || rule.sseKmsEncryptedObjects === true : rule.deleteMarkerReplication))
    .map((rule) => ({
      bucketArn: rule.destination.bucketArn,
      ruleId: rule.id,
      ...(rule.destination.storageClass !== undefined ? { storageClass: rule.destination.storageClass } : {}),
      ...(rule.destination.replicaKmsKeyId !== undefined ? { replicaKmsKeyId: rule.destination.replicaKmsKeyId } : {}),
    }));
}
