/**
 * NotificationConfiguration XML (Put/GetBucketNotificationConfiguration): QueueConfiguration,
 * TopicConfiguration and CloudFunctionConfiguration elements, each with an optional Id, its
 * destination ARN, one or more Event names and an optional S3Key filter of prefix/suffix rules.
 */
import { createHash } from 'node:crypto';
import { SvcError } from '../../errors/index.js';
import type { NotificationRule } from '../../object/index.js';
import { isKnownEventPattern, rulesOverlap } from '../../ops/events/event-names.js';
import { parseXmlBody, toXml } from './xml.js';

const kinds = [
  { kind: 'queue', element: 'QueueConfiguration', arn: 'Queue' },
  { kind: 'topic', element: 'TopicConfiguration', arn: 'Topic' },
  { kind: 'function', element: 'CloudFunctionConfiguration', arn: 'CloudFunction' },
] as const;

const malformed = (message: string): SvcError => new SvcError('MalformedXML', message);

/**
 * The rules of a configuration; `knownArns` are the deployment's targets: a rule naming another
 * is refused with InvalidArgument, as S3 refuses a destination it cannot validate.
 */
export function parseNotificationConfiguration(body: Uint8Array, knownArns: ReadonlySet<string>): NotificationRule[] {
  const parsed = parseXmlBody(body, [...kinds.map((kind) => kind.element), 'Event', 'FilterRule']);
  const root = parsed.NotificationConfiguration;
  if (root === undefined) throw malformed('The body must be a NotificationConfiguration.');
  const element = root === '' ? {} : root;
  if (typeof element !== 'object' || element === null) throw malformed('The body must be a NotificationConfiguration.');
  const given = element as Record<string, unknown>;
  const unknown = Object.keys(given).find((name) => !kinds.some((kind) => kind.element === name) && name !== 'EventBridgeConfiguration');
  if (unknown !== undefined) throw malformed(`A NotificationConfiguration has no element ${unknown}.`);
  if (given.EventBridgeConfiguration !== undefined) throw new SvcError('NotImplemented', 'EventBridgeConfiguration is not supported: name a target ARN of this deployment.');
  const rules = kinds.flatMap(({ kind, element: name, arn }) => ((given[name] as unknown[] | undefined) ?? []).map((entry) => ruleOf(kind, arn, entry)));
  const unreachable = rules.filter((rule) => !knownArns.has(rule.arn)).map((rule) => rule.arn);
  if (unreachable.length > 0) {
    throw new SvcError('InvalidArgument', `Unable to validate the following destination configurations: ${[...new Set(unreachable)].join(', ')}`, { argumentName: unreachable[0] });
  }
  checkDistinct(rules);
  return rules;
}

function ruleOf(kind: NotificationRule['kind'], arnElement: string, entry: unknown): NotificationRule {
  if (typeof entry !== 'object' || entry === null) throw malformed(`A ${arnElement}Configuration must hold a ${arnElement} and an Event.`);
  const fields = entry as Record<string, unknown>;
  const known = new Set(['Id', arnElement, 'Event', 'Filter']);
  const extra = Object.keys(fields).find((name) => !known.has(name));
  if (extra !== undefined) throw malformed(`A ${arnElement}Configuration has no element ${extra}.`);
  const arn = fields[arnElement];
  if (typeof arn !== 'string' || arn === '') throw malformed(`A ${arnElement}Configuration needs a ${arnElement} ARN.`);
  const events = fields.Event as unknown[] | undefined;
  if (!Array.isArray(events) || events.length === 0 || !events.every((name) => typeof name === 'string')) throw malformed(`A ${arnElement}Configuration needs at least one Event.`);
  const unknownEvent = (events as string[]).find((name) => !isKnownEventPattern(name));
  if (unknownEvent !== undefined) throw new SvcError('InvalidArgument', `The event '${unknownEvent}' is not supported for notifications.`, { argumentName: 'Event' });
  const filter = filterOf(fields.Filter);
  const id = typeof fields.Id === 'string' && fields.Id !== '' ? fields.Id : generatedId(arn, events as string[], filter);
  return { id, kind, arn, events: [...new Set(events as string[])], ...filter };
}

function filterOf(value: unknown): { prefix?: string; suffix?: string } {
  if (value === undefined || value === '') return {};
  const s3Key = typeof value === 'object' && value !== null ? (value as Record<string, unknown>).S3Key : undefined;
  if (s3Key === undefined || s3Key === '') return {};
  if (typeof s3Key !== 'object' || s3Key === null) throw malformed('A Filter holds an S3Key of FilterRules.');
  const filterRules = ((s3Key as Record<string, unknown>).FilterRule as unknown[] | undefined) ?? [];
  const filter: { prefix?: string; suffix?: string } = {};
  for (const rule of filterRules) {
    const { Name: name, Value: given } = (typeof rule === 'object' && rule !== null ? rule : {}) as Record<string, unknown>;
    const kind = typeof name === 'string' ? name.toLowerCase() : undefined;
    if (kind !== 'prefix' && kind !== 'suffix') throw new SvcError('InvalidArgument', 'A filter rule name must be either prefix or suffix.', { argumentName: 'FilterRule' });
    if (filter[kind] !== undefined) throw new SvcError('InvalidArgument', `Cannot specify more than one ${kind} rule in a filter.`, { argumentName: 'FilterRule' });
    filter[kind] = typeof given === 'string' ? given : '';
  }
  return filter;
}

/** A rule sent without an Id gets one derived from what it says, so a retried Put stores the same configuration. */
function generatedId(arn: string, events: string[], filter: { prefix?: string; suffix?: string }): string {
  return createHash('sha256').update(JSON.stringify([arn, events, filter])).digest('hex').slice(0, 32);
}

function checkDistinct(rules: NotificationRule[]): void {
  const ids = new Set<string>();
  for (const [index, rule] of rules.entries()) {
    if (ids.has(rule.id)) throw new SvcError('InvalidArgument', `Two notification rules have the same Id ${rule.id}.`, { argumentName: 'Id' });
    ids.add(rule.id);
    if (rules.slice(index + 1).some((other) => rulesOverlap(rule, other))) {
      throw new SvcError('InvalidArgument', 'Configuration is ambiguously defined. Cannot have overlapping suffixes in two rules if the prefixes are overlapping for the same event type.', { argumentName: 'FilterRule' });
    }
  }
}

export function notificationConfigurationXml(rules: NotificationRule[]): string {
  const content: Record<string, unknown> = {};
  for (const { kind, element, arn } of kinds) {
    const chosen = rules.filter((rule) => rule.kind === kind);
    if (chosen.length === 0) continue;
    content[element] = chosen.map((rule) => ({
      Id: rule.id,
      [arn]: rule.arn,
      Event: rule.events,
      ...(rule.prefix !== undefined || rule.suffix !== undefined
        ? { Filter: { S3Key: { FilterRule: [...(rule.prefix !== undefined ? [{ Name: 'prefix', Value: rule.prefix }] : []), ...(rule.suffix !== undefined ? [{ Name: 'suffix', Value: rule.suffix }] : [])] } } }
        : {}),
    }));
  }
  return toXml('NotificationConfiguration', content);
}
