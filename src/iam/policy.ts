/**
 * IAM-style JSON policies: parsing and validation. A document is checked whole before it is
 * stored; anything this evaluator would not understand is refused as MalformedPolicy, never
 * guessed at. Pure code: text in, a typed policy out.
 */
import { SvcError } from '../errors/index.js';
import { limits } from '../util/limits.js';
import { isIP } from 'node:net';

export type Effect = 'Allow' | 'Deny';
export type ConditionOperator = (typeof conditionOperators)[number];

export interface Condition {
  operator: ConditionOperator;
  /** Missing keys count as a match (the operator's `IfExists` form). */
  ifExists: boolean;
  key: string;
  values: string[];
}

export interface Statement {
  effect: Effect;
  /** `*` for everyone (anonymous included), otherwise access keys or user names; absent in identity policies. */
  principals?: string[];
  /** Exactly one of actions and notActions is set. */
  actions?: string[];
  notActions?: string[];
  resources: string[];
  conditions: Condition[];
}

export interface Policy {
  version: string;
  statements: Statement[];
}

export const conditionOperators = ['StringEquals', 'StringNotEquals', 'StringLike', 'StringNotLike', 'IpAddress', 'NotIpAddress'] as const;
export const conditionKeys = ['s3:prefix', 's3:delimiter', 's3:max-keys', 'aws:SourceIp', 'aws:username', 'aws:userid', 'aws:SecureTransport'] as const;
/** A web identity session's token claims are condition keys too: `jwt:<claim>` (absent for every other caller). */
export const jwtConditionKey = /^jwt:[\w.:-]{1,64}$/;
export const policyVersions = ['2012-10-17', '2008-10-17'];
export const s3ResourcePrefix = 'arn:aws:s3:::';

export interface ParseOptions {
  /** A bucket policy names principals and may only name resources of its own bucket. */
  bucket?: string;
}

export function parsePolicy(text: string, options: ParseOptions = {}): Policy {
  if (Buffer.byteLength(text) > limits.maxPolicyBytes) malformed(`the policy is larger than ${limits.maxPolicyBytes} bytes`);
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    malformed('the policy is not valid JSON');
  }
  return validatePolicy(document, options);
}

export function validatePolicy(document: unknown, options: ParseOptions = {}): Policy {
  const object = asObject(document, 'the policy');
  onlyFields(object, ['Version', 'Id', 'Statement'], 'the policy');
  const version = object.Version;
  if (typeof version !== 'string' || !policyVersions.includes(version)) malformed(`Version must be one of ${policyVersions.join(', ')}`);
  const raw = object.Statement;
  const list = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  if (list.length === 0) malformed('the policy has no Statement');
  return { version, statements: list.map((statement, index) => parseStatement(statement, index, options)) };
}

function parseStatement(value: unknown, index: number, options: ParseOptions): Statement {
  const where = `Statement[${index}]`;
  const object = asObject(value, where);
  onlyFields(object, ['Sid', 'Effect', 'Principal', 'NotPrincipal', 'Action', 'NotAction', 'Resource', 'Condition'], where);
  if (object.NotPrincipal !== undefined) malformed(`${where}: NotPrincipal is not supported`);
  if (object.Effect !== 'Allow' && object.Effect !== 'Deny') malformed(`${where}: Effect must be Allow or Deny`);
  if ((object.Action === undefined) === (object.NotAction === undefined)) malformed(`${where}: give exactly one of Action and NotAction`);
  const statement: Statement = {
    effect: object.Effect,
    resources: stringList(object.Resource, `${where}.Resource`).map((resource) => checkResource(resource, where, options)),
    conditions: parseConditions(object.Condition, where),
  };
  if (object.Action !== undefined) statement.actions = stringList(object.Action, `${where}.Action`).map((action) => checkAction(action, where));
  else statement.notActions = stringList(object.NotAction, `${where}.NotAction`).map((action) => checkAction(action, where));
  if (options.bucket === undefined) {
    if (object.Principal !== undefined) malformed(`${where}: a user policy names no Principal`);
  } else {
    statement.principals = parsePrincipal(object.Principal, where);
  }
  return statement;
}

function parsePrincipal(value: unknown, where: string): string[] {
  if (value === '*') return ['*'];
  if (value === undefined) malformed(`${where}: a bucket policy statement needs a Principal`);
  const object = asObject(value, `${where}.Principal`);
  onlyFields(object, ['AWS'], `${where}.Principal`);
  return stringList(object.AWS, `${where}.Principal.AWS`);
}

function checkAction(action: string, where: string): string {
  if (action === '*' || /^(s3|admin):[A-Za-z*?]+$/.test(action)) return action;
  return malformed(`${where}: action ${JSON.stringify(action)} is not '*' or s3:<Action> (wildcards * and ? allowed)`);
}

function checkResource(resource: string, where: string, options: ParseOptions): string {
  if (resource === '*' && options.bucket === undefined) return resource;
  if (!resource.startsWith(s3ResourcePrefix) || resource.length === s3ResourcePrefix.length) {
    malformed(`${where}: resource ${JSON.stringify(resource)} is not arn:aws:s3:::<bucket>[/<key>]`);
  }
  if (options.bucket !== undefined) {
    const name = resource.slice(s3ResourcePrefix.length).split('/')[0];
    if (name !== options.bucket) malformed(`${where}: resource ${JSON.stringify(resource)} is outside bucket ${options.bucket}`);
  }
  return resource;
}

function parseConditions(value: unknown, where: string): Condition[] {
  if (value === undefined) return [];
  const conditions: Condition[] = [];
  for (const [operatorName, block] of Object.entries(asObject(value, `${where}.Condition`))) {
    const ifExists = operatorName.endsWith('IfExists');
    const operator = (ifExists ? operatorName.slice(0, -'IfExists'.length) : operatorName) as ConditionOperator;
    if (!conditionOperators.includes(operator)) malformed(`${where}: condition operator ${operatorName} is not one of ${conditionOperators.join(', ')} (optionally ...IfExists)`);
    for (const [key, values] of Object.entries(asObject(block, `${where}.Condition.${operatorName}`))) {
      if (!(conditionKeys as readonly string[]).includes(key) && !jwtConditionKey.test(key)) malformed(`${where}: condition key ${key} is not one of ${conditionKeys.join(', ')} or jwt:<claim>`);
      const list = stringList(values, `${where}.Condition.${operatorName}.${key}`);
      if (operator.endsWith('IpAddress')) list.forEach((cidr) => checkCidr(cidr, where));
      conditions.push({ operator, ifExists, key, values: list });
    }
  }
  return conditions;
}

function checkCidr(cidr: string, where: string): void {
  const [address, bits, extra] = cidr.split('/');
  const family = isIP(address ?? '');
  const maxBits = family === 4 ? 32 : 128;
  const bitsOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= maxBits);
  if (family === 0 || extra !== undefined || !bitsOk) malformed(`${where}: ${JSON.stringify(cidr)} is not an IP address or CIDR block`);
}

function stringList(value: unknown, where: string): string[] {
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length === 0 || !list.every((item) => typeof item === 'string' && item.length > 0)) {
    malformed(`${where} must be a non-empty string or array of non-empty strings`);
  }
  return list as string[];
}

function asObject(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) malformed(`${where} must be a JSON object`);
  return value as Record<string, unknown>;
}

function onlyFields(object: Record<string, unknown>, allowed: string[], where: string): void {
  const unknown = Object.keys(object).find((name) => !allowed.includes(name));
  if (unknown !== undefined) malformed(`${where}: unknown field ${unknown}`);
}

function malformed(reason: string): never {
  throw new SvcError('MalformedPolicy', `The policy is not valid: ${reason}.`, { reason });
}
