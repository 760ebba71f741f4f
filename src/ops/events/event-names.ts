/**
 * S3's event names as bucket notifications use them, and the rules' matching: a rule names events
 * exactly (`s3:ObjectCreated:Put`) or by family (`s3:ObjectCreated:*`), and narrows keys by an
 * optional prefix and suffix. Pure.
 */
import type { NotificationRule } from '../../object/index.js';

/** Every event this server raises, by family. */
export const eventFamilies = {
  ObjectCreated: ['Put', 'Post', 'Copy', 'CompleteMultipartUpload'],
  ObjectRemoved: ['Delete', 'DeleteMarkerCreated'],
  ObjectTagging: ['Put', 'Delete'],
  LifecycleExpiration: ['Delete', 'DeleteMarkerCreated'],
  Replication: ['OperationFailedReplication', 'OperationCompletedReplication'],
} as const;

export type EventFamily = keyof typeof eventFamilies;
/** An event's name without the `s3:` prefix, as records carry it (`ObjectCreated:Put`). */
export type EventName = { [F in EventFamily]: `${F}:${(typeof eventFamilies)[F][number]}` }[EventFamily];

export const allEventNames: EventName[] = Object.entries(eventFamilies).flatMap(([family, names]) => names.map((name) => `${family}:${name}` as EventName));

/** Whether `s3:...` names an event or a family of events this server raises. */
export function isKnownEventPattern(pattern: string): boolean {
  if (!pattern.startsWith('s3:')) return false;
  const [family, name, ...rest] = pattern.slice(3).split(':');
  if (rest.length > 0 || family === undefined || name === undefined || !(family in eventFamilies)) return false;
  return name === '*' || (eventFamilies[family as EventFamily] as readonly string[]).includes(name);
}

/** The events a pattern names (`s3:ObjectCreated:*` names four). */
export function eventsOf(pattern: string): EventName[] {
  const [family, name] = pattern.slice(3).split(':');
  return allEventNames.filter((event) => event === `${family}:${name}` || (name === '*' && event.startsWith(`${family}:`)));
}

export function ruleMatches(rule: NotificationRule, event: EventName, key: string): boolean {
  if (rule.prefix !== undefined && !key.startsWith(rule.prefix)) return false;
  if (rule.suffix !== undefined && !key.endsWith(rule.suffix)) return false;
  return rule.events.some((pattern) => eventsOf(pattern).includes(event));
}

/**
 * Two rules overlap, and S3 refuses the pair, when some event is named by both and some key could
 * match both filters: their prefixes are one a prefix of the other and their suffixes one a
 * suffix of the other (an absent filter matches every key).
 */
export function rulesOverlap(first: NotificationRule, second: NotificationRule): boolean {
  const firstEvents = new Set(first.events.flatMap(eventsOf));
  if (!second.events.flatMap(eventsOf).some((event) => firstEvents.has(event))) return false;
  const prefixes = [first.prefix ?? '', second.prefix ?? ''];
  const suffixes = [first.suffix ?? '', second.suffix ?? ''];
  const prefixesOverlap = prefixes[0]!.startsWith(prefixes[1]!) || prefixes[1]!.startsWith(prefixes[0]!);
  const suffixesOverlap = suffixes[0]!.endsWith(suffixes[1]!) || suffixes[1]!.endsWith(suffixes[0]!);
  return prefixesOverlap && suffixesOverlap;
}

/** A target's ARN as rules name it: `arn:svc:sqs::<id>:<type>`. */
export function targetArn(id: string, type: string): string {
  return `arn:svc:sqs::${id}:${type}`;
}
