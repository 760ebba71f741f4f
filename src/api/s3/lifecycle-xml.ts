/**
 * Bucket lifecycle configuration: the XML of Put/GetBucketLifecycleConfiguration, validated as
 * AWS validates it. A malformed document is MalformedXML, a value out of range InvalidArgument,
 * a combination AWS refuses InvalidRequest. A transition's StorageClass names a remote tier (the
 * handler checks that the tier exists).
 * What the rules do is src/ops/lifecycle-rules.ts.
 */
import { randomBytes } from 'node:crypto';
import { SvcError } from '../../errors/index.js';
import type { LifecycleFilter, LifecycleRule } from '../../object/index.js';
import { limits } from '../../util/limits.js';
import { currentTransitionsOf, noncurrentTransitionsOf } from '../../ops/lifecycle-rules.js';
import { parseXmlBody, toXml } from './xml.js';

type Element = Record<string, unknown>;

const ruleElements = new Set(['ID', 'Status', 'Filter', 'Prefix', 'Expiration', 'NoncurrentVersionExpiration', 'AbortIncompleteMultipartUpload', 'Transition', 'NoncurrentVersionTransition']);

export function parseLifecycleConfiguration(body: Uint8Array): LifecycleRule[] {
  const parsed = parseXmlBody(body, ['Rule', 'Tag']);
  const configuration = parsed.LifecycleConfiguration;
  const rules = isElement(configuration) ? configuration.Rule : undefined;
  if (!Array.isArray(rules) || rules.length === 0) throw new SvcError('MalformedXML', 'A LifecycleConfiguration needs at least one Rule.');
  if (rules.length > limits.maxLifecycleRules) throw new SvcError('InvalidRequest', `A lifecycle configuration may hold ${limits.maxLifecycleRules} rules at most.`);
  const parsedRules = rules.map((rule) => parseRule(isElement(rule) ? rule : malformed('Every Rule needs ID, Status, Filter and an action.')));
  const ids = new Set<string>();
  for (const rule of parsedRules) {
    if (ids.has(rule.id)) throw new SvcError('InvalidArgument', 'Rule ID must be unique. Found same ID for more than one rule.', { errorFields: { ArgumentName: 'ID', ArgumentValue: rule.id } });
    ids.add(rule.id);
  }
  return parsedRules;
}

function parseRule(rule: Element): LifecycleRule {
  const unknown = Object.keys(rule).find((name) => !ruleElements.has(name));
  if (unknown !== undefined) malformed(`A Rule has no element ${unknown}.`);
  const id = rule.ID === undefined ? randomBytes(24).toString('base64url').slice(0, 32) : text(rule.ID, 'ID');
  if (id.length > limits.maxLifecycleRuleIdChars) throw new SvcError('InvalidArgument', `ID length should not exceed allowed limit of ${limits.maxLifecycleRuleIdChars}`, { errorFields: { ArgumentName: 'ID' } });
  if (rule.Status !== 'Enabled' && rule.Status !== 'Disabled') malformed('Status must be Enabled or Disabled.');
  const { filter, form } = filterOf(rule);
  const expiration = rule.Expiration === undefined ? undefined : expirationOf(rule.Expiration);
  const noncurrent = rule.NoncurrentVersionExpiration === undefined ? undefined : noncurrentOf(rule.NoncurrentVersionExpiration);
  const abortDays = rule.AbortIncompleteMultipartUpload === undefined ? undefined : abortDaysOf(rule.AbortIncompleteMultipartUpload);
  const transitions = elementsOf(rule.Transition).map(transitionOf);
  const noncurrentTransitions = elementsOf(rule.NoncurrentVersionTransition).map(noncurrentTransitionOf);
  if (!expiration && !noncurrent && abortDays === undefined && transitions.length === 0 && noncurrentTransitions.length === 0) throw new SvcError('InvalidRequest', 'At least one action needs to be specified in a rule.');
  checkTransitions(transitions, expiration, filter);
  checkNoncurrentTransitions(noncurrentTransitions, noncurrent, filter);
  const tagged = (filter.tags?.length ?? 0) > 0;
  if (tagged && expiration?.expiredObjectDeleteMarker !== undefined) throw new SvcError('InvalidRequest', 'ExpiredObjectDeleteMarker cannot be specified with tags.');
  if (tagged && abortDays !== undefined) throw new SvcError('InvalidRequest', 'AbortIncompleteMultipartUpload cannot be specified with tags.');
  return {
    id,
    enabled: rule.Status === 'Enabled',
    filter,
    ...(form === 'filter' ? {} : { filterForm: form }),
    ...(expiration ? { expiration } : {}),
    ...(noncurrent ? { noncurrentVersionExpiration: noncurrent } : {}),
    ...(abortDays !== undefined ? { abortIncompleteMultipartUploadDays: abortDays } : {}),
    ...(transitions.length === 1 ? { transition: transitions[0]! } : transitions.length > 1 ? { transitions } : {}),
    ...(noncurrentTransitions.length === 1 ? { noncurrentVersionTransition: noncurrentTransitions[0]! } : noncurrentTransitions.length > 1 ? { noncurrentVersionTransitions: noncurrentTransitions } : {}),
  };
}

/** A repeatable element: absent, one, or several. */
function elementsOf(value: unknown): unknown[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** How AWS names a rule's filter in its refusals: `(prefix=logs/)`. */
function filterText(filter: LifecycleFilter): string {
  return `(prefix=${filter.prefix ?? ''})`;
}

/**
 * A rule's Transitions, as AWS checks them: each to a different tier; all by Days or all by Date,
 * and by the same one as the rule's Expiration; no two on the same day; and every one before the
 * Expiration (a version expired first would never move). The rule applies them in time order,
 * whatever order they were sent in.
 */
function checkTransitions(transitions: NonNullable<LifecycleRule['transitions']>, expiration: LifecycleRule['expiration'], filter: LifecycleFilter): void {
  const where = `filter '${filterText(filter)}'`;
  const refuse = (message: string, argument: string): never => {
    throw new SvcError('InvalidArgument', message, { errorFields: { ArgumentName: argument } });
  };
  if (new Set(transitions.map((step) => step.storageClass)).size !== transitions.length) refuse(`'StorageClass' must be different for 'Transition' actions in same 'Rule' with ${where}`, 'StorageClass');
  const byDays = transitions.filter((step) => step.days !== undefined).length;
  const expirationByDays = expiration?.days !== undefined ? 1 : expiration?.dateMs !== undefined ? 0 : undefined;
  if ((byDays !== 0 && byDays !== transitions.length) || (transitions.length > 0 && expirationByDays !== undefined && expirationByDays !== (byDays > 0 ? 1 : 0))) {
    throw new SvcError('InvalidRequest', `Found mixed 'Date' and 'Days' based Expiration and Transition actions in lifecycle rule for ${where}`);
  }
  const when = transitions.map((step) => step.days ?? step.dateMs!);
  const field = byDays > 0 ? 'Days' : 'Date';
  if (new Set(when).size !== when.length) refuse(`'${field}' must be different for each 'Transition' action in the same 'Rule' with ${where}`, field);
  const expiresAt = expiration?.days ?? expiration?.dateMs;
  if (expiresAt !== undefined && when.some((at) => at >= expiresAt)) refuse(`'${field}' in the Expiration action for ${where} must be greater than '${field}' in the Transition action`, field);
}

/** A rule's NoncurrentVersionTransitions, likewise: different tiers, different days, all before the NoncurrentVersionExpiration. */
function checkNoncurrentTransitions(transitions: NonNullable<LifecycleRule['noncurrentVersionTransitions']>, expiration: LifecycleRule['noncurrentVersionExpiration'], filter: LifecycleFilter): void {
  const where = `filter '${filterText(filter)}'`;
  const refuse = (message: string, argument: string): never => {
    throw new SvcError('InvalidArgument', message, { errorFields: { ArgumentName: argument } });
  };
  if (new Set(transitions.map((step) => step.storageClass)).size !== transitions.length) refuse(`'StorageClass' must be different for 'NoncurrentVersionTransition' actions in same 'Rule' with ${where}`, 'StorageClass');
  const days = transitions.map((step) => step.noncurrentDays);
  if (new Set(days).size !== days.length) refuse(`'NoncurrentDays' must be different for each 'NoncurrentVersionTransition' action in the same 'Rule' with ${where}`, 'NoncurrentDays');
  if (expiration && days.some((day) => day >= expiration.noncurrentDays)) refuse(`'NoncurrentDays' in the NoncurrentVersionExpiration action for ${where} must be greater than 'NoncurrentDays' in the NoncurrentVersionTransition action`, 'NoncurrentDays');
}

/** One `Transition`: Days (0 or more) or Date, and the StorageClass (a tier's name). */
function transitionOf(value: unknown): NonNullable<LifecycleRule['transition']> {
  const element = isElement(value) ? value : malformed('Transition needs Days or Date, and StorageClass.');
  const unknown = Object.keys(element).find((name) => !['Days', 'Date', 'StorageClass'].includes(name));
  if (unknown !== undefined) malformed(`Transition has no element ${unknown}.`);
  if ((element.Days === undefined) === (element.Date === undefined)) malformed('Transition takes exactly one of Days and Date.');
  const storageClass = storageClassOf(element.StorageClass);
  if (element.Days !== undefined) return { days: wholeNumber(element.Days, 'Days', 0), storageClass };
  return { dateMs: midnightOf(text(element.Date, 'Date')), storageClass };
}

function noncurrentTransitionOf(value: unknown): NonNullable<LifecycleRule['noncurrentVersionTransition']> {
  const element = isElement(value) ? value : malformed('NoncurrentVersionTransition needs NoncurrentDays and StorageClass.');
  if (element.NewerNoncurrentVersions !== undefined) throw new SvcError('NotImplemented', 'NewerNoncurrentVersions in a NoncurrentVersionTransition is not supported.');
  const unknown = Object.keys(element).find((name) => !['NoncurrentDays', 'StorageClass'].includes(name));
  if (unknown !== undefined) malformed(`NoncurrentVersionTransition has no element ${unknown}.`);
  if (element.NoncurrentDays === undefined) malformed('NoncurrentVersionTransition needs NoncurrentDays.');
  return { noncurrentDays: wholeNumber(element.NoncurrentDays, 'NoncurrentDays', 0), storageClass: storageClassOf(element.StorageClass) };
}

function storageClassOf(value: unknown): string {
  if (value === undefined) malformed('A transition needs a StorageClass.');
  const storageClass = text(value, 'StorageClass');
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(storageClass)) throw new SvcError('InvalidStorageClass', `The storage class '${storageClass}' is not a tier of this server.`, { storageClass });
  return storageClass.toUpperCase();
}

/**
 * `Filter` (one condition, or `And` of several), or the older rule-level `Prefix`; not both. The
 * form the client used is kept, so that the configuration reads back as it was sent.
 */
function filterOf(rule: Element): { filter: LifecycleFilter; form: NonNullable<LifecycleRule['filterForm']> | 'filter' } {
  if (rule.Filter !== undefined && rule.Prefix !== undefined) malformed('A Rule may have Filter or Prefix, not both.');
  if (rule.Prefix !== undefined) return { filter: prefixFilter(text(rule.Prefix, 'Prefix')), form: 'rulePrefix' };
  if (rule.Filter === undefined) malformed('Every Rule needs a Filter (an empty one applies to every object).');
  if (rule.Filter === '') return { filter: {}, form: 'filter' };
  const filter = isElement(rule.Filter) ? rule.Filter : malformed('Filter is not valid.');
  const conditions = Object.keys(filter);
  if (conditions.length > 1) malformed('A Filter holds one condition; combine several with And.');
  if (filter.And !== undefined) return { filter: andFilter(filter.And), form: 'and' };
  return { filter: conditionsOf(filter), form: 'filter' };
}

function andFilter(value: unknown): LifecycleFilter {
  const and = isElement(value) ? value : malformed('And needs at least one condition.');
  const filter = conditionsOf(and);
  const keys = (filter.tags ?? []).map((tag) => tag.key);
  if (new Set(keys).size !== keys.length) throw new SvcError('InvalidRequest', 'Duplicate Tag Keys are not allowed.');
  return filter;
}

function conditionsOf(element: Element): LifecycleFilter {
  const unknown = Object.keys(element).find((name) => !['Prefix', 'Tag', 'ObjectSizeGreaterThan', 'ObjectSizeLessThan'].includes(name));
  if (unknown !== undefined) malformed(`A Filter has no condition ${unknown}.`);
  const tags = ((element.Tag as unknown[] | undefined) ?? []).map(tagOf);
  const greater = element.ObjectSizeGreaterThan === undefined ? undefined : wholeNumber(element.ObjectSizeGreaterThan, 'ObjectSizeGreaterThan', 0);
  const less = element.ObjectSizeLessThan === undefined ? undefined : wholeNumber(element.ObjectSizeLessThan, 'ObjectSizeLessThan', 1);
  if (greater !== undefined && less !== undefined && less <= greater) {
    throw new SvcError('InvalidArgument', 'ObjectSizeLessThan must be greater than ObjectSizeGreaterThan.', { errorFields: { ArgumentName: 'ObjectSizeLessThan' } });
  }
  return {
    ...(element.Prefix !== undefined ? prefixFilter(text(element.Prefix, 'Prefix')) : {}),
    ...(tags.length > 0 ? { tags } : {}),
    ...(greater !== undefined ? { sizeGreaterThanBytes: greater } : {}),
    ...(less !== undefined ? { sizeLessThanBytes: less } : {}),
  };
}

function prefixFilter(prefix: string): LifecycleFilter {
  if (prefix.length > limits.maxObjectKeyBytes) throw new SvcError('InvalidArgument', 'The prefix is longer than an object key may be.', { errorFields: { ArgumentName: 'Prefix' } });
  return { prefix };
}

function tagOf(value: unknown): { key: string; value: string } {
  const tag = isElement(value) ? value : malformed('A Tag needs a Key and a Value.');
  if (tag.Key === undefined || tag.Value === undefined) malformed('A Tag needs a Key and a Value.');
  const key = text(tag.Key, 'Key');
  const tagValue = text(tag.Value, 'Value');
  if (key.length === 0 || key.length > 128 || tagValue.length > 256) throw new SvcError('InvalidTag', 'A tag key has 1 to 128 characters and its value at most 256.');
  return { key, value: tagValue };
}

function expirationOf(value: unknown): NonNullable<LifecycleRule['expiration']> {
  const expiration = isElement(value) ? value : malformed('Expiration needs Days, Date or ExpiredObjectDeleteMarker.');
  const given = ['Days', 'Date', 'ExpiredObjectDeleteMarker'].filter((name) => expiration[name] !== undefined);
  if (given.length !== 1) malformed('Expiration takes exactly one of Days, Date and ExpiredObjectDeleteMarker.');
  if (expiration.Days !== undefined) return { days: positiveDays(expiration.Days, "'Days' for Expiration action") };
  if (expiration.Date !== undefined) return { dateMs: midnightOf(text(expiration.Date, 'Date')) };
  const marker = expiration.ExpiredObjectDeleteMarker;
  if (marker !== 'true' && marker !== 'false') malformed('ExpiredObjectDeleteMarker must be true or false.');
  return { expiredObjectDeleteMarker: marker === 'true' };
}

function noncurrentOf(value: unknown): NonNullable<LifecycleRule['noncurrentVersionExpiration']> {
  const element = isElement(value) ? value : malformed('NoncurrentVersionExpiration needs NoncurrentDays.');
  if (element.NoncurrentDays === undefined) malformed('NoncurrentVersionExpiration needs NoncurrentDays.');
  const noncurrentDays = positiveDays(element.NoncurrentDays, "'NoncurrentDays' for NoncurrentVersionExpiration action");
  if (element.NewerNoncurrentVersions === undefined) return { noncurrentDays };
  const newer = wholeNumber(element.NewerNoncurrentVersions, 'NewerNoncurrentVersions', 1);
  if (newer > limits.maxNewerNoncurrentVersions) {
    throw new SvcError('InvalidArgument', `NewerNoncurrentVersions must be between 1 and ${limits.maxNewerNoncurrentVersions}.`, { errorFields: { ArgumentName: 'NewerNoncurrentVersions' } });
  }
  return { noncurrentDays, newerNoncurrentVersions: newer };
}

function abortDaysOf(value: unknown): number {
  const element = isElement(value) ? value : malformed('AbortIncompleteMultipartUpload needs DaysAfterInitiation.');
  if (element.DaysAfterInitiation === undefined) malformed('AbortIncompleteMultipartUpload needs DaysAfterInitiation.');
  return positiveDays(element.DaysAfterInitiation, "'DaysAfterInitiation' for AbortIncompleteMultipartUpload action");
}

function positiveDays(value: unknown, what: string): number {
  const days = /^\d{1,9}$/.test(String(value)) ? Number(value) : NaN;
  if (!(days >= 1 && days <= limits.maxLifecycleDays)) throw new SvcError('InvalidArgument', `${what} must be a positive integer`, { errorFields: { ArgumentName: what.split("'")[1] ?? what } });
  return days;
}

function wholeNumber(value: unknown, name: string, minimum: number): number {
  const number = /^\d{1,16}$/.test(String(value)) ? Number(value) : NaN;
  if (!(Number.isSafeInteger(number) && number >= minimum)) throw new SvcError('InvalidArgument', `${name} must be a whole number of at least ${minimum}.`, { errorFields: { ArgumentName: name } });
  return number;
}

/** An ISO 8601 date at midnight UTC (`2030-01-01` or `2030-01-01T00:00:00.000Z`). */
function midnightOf(value: string): number {
  const dateMs = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  if (!Number.isFinite(dateMs) || !/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]00:?00))?$/.test(value)) throw new SvcError('InvalidArgument', "'Date' must be an ISO 8601 date.", { errorFields: { ArgumentName: 'Date' } });
  if (dateMs % dayMs !== 0) throw new SvcError('InvalidArgument', "'Date' must be at midnight GMT", { errorFields: { ArgumentName: 'Date' } });
  return dateMs;
}

const dayMs = 86_400_000;

function text(value: unknown, name: string): string {
  if (typeof value !== 'string') malformed(`${name} must be text.`);
  return value;
}

function isElement(value: unknown): value is Element {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function malformed(message: string): never {
  throw new SvcError('MalformedXML', message);
}

export function lifecycleConfigurationXml(rules: LifecycleRule[]): string {
  return toXml('LifecycleConfiguration', { Rule: rules.map(ruleXml) });
}

function ruleXml(rule: LifecycleRule): Element {
  const { expiration, noncurrentVersionExpiration: noncurrent } = rule;
  const transitions = currentTransitionsOf(rule);
  const noncurrentTransitions = noncurrentTransitionsOf(rule);
  return {
    ID: rule.id,
    ...(rule.filterForm === 'rulePrefix' ? { Prefix: rule.filter.prefix ?? '' } : { Filter: filterXml(rule.filter, rule.filterForm === 'and') }),
    Status: rule.enabled ? 'Enabled' : 'Disabled',
    ...(expiration
      ? { Expiration: expiration.days !== undefined ? { Days: expiration.days } : expiration.dateMs !== undefined ? { Date: new Date(expiration.dateMs).toISOString() } : { ExpiredObjectDeleteMarker: expiration.expiredObjectDeleteMarker === true } }
      : {}),
    ...(noncurrent ? { NoncurrentVersionExpiration: { NoncurrentDays: noncurrent.noncurrentDays, ...(noncurrent.newerNoncurrentVersions !== undefined ? { NewerNoncurrentVersions: noncurrent.newerNoncurrentVersions } : {}) } } : {}),
    ...(rule.abortIncompleteMultipartUploadDays !== undefined ? { AbortIncompleteMultipartUpload: { DaysAfterInitiation: rule.abortIncompleteMultipartUploadDays } } : {}),
    ...(transitions.length > 0 ? { Transition: transitions.map((step) => ({ ...(step.days !== undefined ? { Days: step.days } : { Date: new Date(step.dateMs!).toISOString() }), StorageClass: step.storageClass })) } : {}),
    ...(noncurrentTransitions.length > 0 ? { NoncurrentVersionTransition: noncurrentTransitions.map((step) => ({ NoncurrentDays: step.noncurrentDays, StorageClass: step.storageClass })) } : {}),
  };
}

function filterXml(filter: LifecycleFilter, and: boolean): Element | string {
  const conditions: Element = {
    ...(filter.prefix !== undefined ? { Prefix: filter.prefix } : {}),
    ...(filter.tags ? { Tag: filter.tags.map((tag) => ({ Key: tag.key, Value: tag.value })) } : {}),
    ...(filter.sizeGreaterThanBytes !== undefined ? { ObjectSizeGreaterThan: filter.sizeGreaterThanBytes } : {}),
    ...(filter.sizeLessThanBytes !== undefined ? { ObjectSizeLessThan: filter.sizeLessThanBytes } : {}),
  };
  const count = Object.keys(conditions).length + Math.max(0, (filter.tags?.length ?? 0) - 1);
  if (count === 0 && !and) return '';
  return count === 1 && !and ? conditions : { And: conditions };
}
