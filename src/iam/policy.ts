/**
 * IAM-style JSON policies: parsing and validation. A document is checked whole before it is
 * stored; anything this evaluator would not understand is refused as MalformedPolicy, never
 * guessed at. Unknown names (actions outside the catalogue of src/iam/actions.ts, condition keys,
 * operators, policy variables) are gathered over the whole document and refused together, each
 * listed by name, in the message and in the error's details (`unknownActions`,
 * `unknownConditionKeys`, `unknownOperators`, `unknownVariables`). Pure code: text in, a typed policy out.
 */
import { SvcError } from '../errors/index.js';
import { limits } from '../util/limits.js';
import { patternMatchesSomeAction } from './actions.js';
import { canonicalConditionKey, parseOperatorName, type ConditionOperator, type ParsedOperator, type SetQualifier } from './condition-keys.js';
import { isCidr, parseBool, parseDateMs, parseNumber } from './operands.js';
import { parseTemplate, type Template } from './variables.js';

export type Effect = 'Allow' | 'Deny';
export { conditionKeys, conditionKeyPrefixes, conditionOperators, variableKeys, type ConditionOperator, type SetQualifier } from './condition-keys.js';

export interface Condition {
  operator: ConditionOperator;
  /** Missing keys count as a match (the operator's `IfExists` form). */
  ifExists: boolean;
  /** `ForAnyValue` / `ForAllValues` for multi-valued keys; absent for a plain operator. */
  qualifier?: SetQualifier;
  /** The key in its catalogue spelling (`aws:SourceIp`, `s3:ExistingObjectTag/team`). */
  key: string;
  /** The values as written (JSON numbers and booleans as their text). */
  values: string[];
  /** The values compiled for policy variables (used by the string operators). */
  templates: Template[];
}

export interface Statement {
  effect: Effect;
  /** `*` for everyone (anonymous included), otherwise access keys or user names; absent in identity policies. */
  principals?: string[];
  /** Exactly one of actions and notActions is set. */
  actions?: string[];
  notActions?: string[];
  resources: string[];
  /** The resources compiled for policy variables, one per resource. */
  resourceTemplates: Template[];
  conditions: Condition[];
}

export interface Policy {
  version: string;
  statements: Statement[];
}

export const policyVersions = ['2012-10-17', '2008-10-17'];
export const s3ResourcePrefix = 'arn:aws:s3:::';

export interface ParseOptions {
  /** A bucket policy names principals and may only name resources of its own bucket. */
  bucket?: string;
}

/** The unknown names found so far, by kind (each kept once, in the order met). */
interface Findings {
  actions: Set<string>;
  conditionKeys: Set<string>;
  operators: Set<string>;
  variables: Set<string>;
}

interface ParseState extends ParseOptions {
  /** Version 2012-10-17: `${...}` are policy variables. */
  variables: boolean;
  findings: Findings;
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
  const findings: Findings = { actions: new Set(), conditionKeys: new Set(), operators: new Set(), variables: new Set() };
  const state: ParseState = { ...options, variables: version === '2012-10-17', findings };
  const statements = list.map((statement, index) => parseStatement(statement, index, state));
  refuseUnknownNames(findings);
  return { version, statements };
}

function refuseUnknownNames(findings: Findings): void {
  const kinds: [label: string, detail: string, names: Set<string>][] = [
    ['actions', 'unknownActions', findings.actions],
    ['condition keys', 'unknownConditionKeys', findings.conditionKeys],
    ['condition operators', 'unknownOperators', findings.operators],
    ['policy variables', 'unknownVariables', findings.variables],
  ];
  const found = kinds.filter(([, , names]) => names.size > 0);
  if (found.length === 0) return;
  const reason = found.map(([label, , names]) => `unknown ${label}: ${[...names].join(', ')}`).join('; ');
  malformed(reason, Object.fromEntries(found.map(([, detail, names]) => [detail, [...names]])));
}

function parseStatement(value: unknown, index: number, state: ParseState): Statement {
  const where = `Statement[${index}]`;
  const object = asObject(value, where);
  onlyFields(object, ['Sid', 'Effect', 'Principal', 'NotPrincipal', 'Action', 'NotAction', 'Resource', 'Condition'], where);
  if (object.NotPrincipal !== undefined) malformed(`${where}: NotPrincipal is not supported`);
  if (object.Effect !== 'Allow' && object.Effect !== 'Deny') malformed(`${where}: Effect must be Allow or Deny`);
  if ((object.Action === undefined) === (object.NotAction === undefined)) malformed(`${where}: give exactly one of Action and NotAction`);
  const resources = stringList(object.Resource, `${where}.Resource`).map((resource) => checkResource(resource, where, state));
  const statement: Statement = {
    effect: object.Effect,
    resources,
    resourceTemplates: resources.map((resource) => template(resource, where, state)),
    conditions: parseConditions(object.Condition, where, state),
  };
  const field = object.Action !== undefined ? 'Action' : 'NotAction';
  const actions = stringList(object[field], `${where}.${field}`);
  for (const action of actions) if (action !== '*' && !patternMatchesSomeAction(action)) state.findings.actions.add(action);
  if (field === 'Action') statement.actions = actions;
  else statement.notActions = actions;
  if (state.bucket === undefined) {
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
  onlyFields(object, ['AWS', 'Service', 'CanonicalUser', 'Federated'], `${where}.Principal`);
  // A service, canonical user or federated principal is kept under its kind: it names no caller of
  // this deployment's S3 API, so the statement never matches a request (it does not fail the policy).
  const named = (field: string, kind: string): string[] => (object[field] === undefined ? [] : stringList(object[field], `${where}.Principal.${field}`).map((name) => `${kind}:${name}`));
  const principals = [...(object.AWS === undefined ? [] : stringList(object.AWS, `${where}.Principal.AWS`)), ...named('Service', 'service'), ...named('CanonicalUser', 'canonical'), ...named('Federated', 'federated')];
  if (principals.length === 0) malformed(`${where}.Principal names no principal`);
  return principals;
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

function template(text: string, where: string, state: ParseState): Template {
  try {
    return parseTemplate(text, state.variables, (name) => state.findings.variables.add(name));
  } catch (error) {
    return malformed(`${where}: ${(error as Error).message}`);
  }
}

function parseConditions(value: unknown, where: string, state: ParseState): Condition[] {
  if (value === undefined) return [];
  const conditions: Condition[] = [];
  for (const [operatorName, block] of Object.entries(asObject(value, `${where}.Condition`))) {
    const parsed = parseOperatorName(operatorName);
    if (parsed === undefined) state.findings.operators.add(operatorName);
    if (parsed?.operator === 'Null' && parsed.qualifier !== undefined) malformed(`${where}: ${operatorName}: Null checks whether a key is present and takes no ForAnyValue:/ForAllValues:`);
    for (const [keyName, operands] of Object.entries(asObject(block, `${where}.Condition.${operatorName}`))) {
      const key = canonicalConditionKey(keyName);
      if (key === undefined) state.findings.conditionKeys.add(keyName);
      const values = conditionValues(operands, `${where}.Condition.${operatorName}.${keyName}`);
      if (parsed === undefined || key === undefined) continue;
      values.forEach((operand) => checkOperand(parsed, operand, `${where}: ${operatorName} value ${JSON.stringify(operand)} for ${keyName}`));
      const strings = parsed.operator.startsWith('String') || parsed.operator.startsWith('Arn');
      const templates = values.map((operand) => (strings ? template(operand, where, state) : [{ kind: 'text' as const, text: operand }]));
      conditions.push({ ...parsed, key, values, templates });
    }
  }
  return conditions;
}

/** Refuses an operand its operator cannot read, naming it. */
function checkOperand(parsed: ParsedOperator, operand: string, what: string): void {
  const { operator } = parsed;
  if (operator.startsWith('Numeric') && parseNumber(operand) === undefined) malformed(`${what} is not a number`);
  if (operator.startsWith('Date') && parseDateMs(operand) === undefined) malformed(`${what} is not an ISO 8601 date (2030-01-31T12:00:00Z) or epoch seconds`);
  if ((operator === 'Bool' || operator === 'Null') && parseBool(operand) === undefined) malformed(`${what} is not true or false`);
  if (operator.endsWith('IpAddress') && !isCidr(operand)) malformed(`${what} is not an IP address or CIDR block`);
}

/** Condition values: a string, number or boolean, or a non-empty array of them (numbers and booleans as their JSON text). */
function conditionValues(value: unknown, where: string): string[] {
  const list = Array.isArray(value) ? value : [value];
  const scalar = (item: unknown) => typeof item === 'string' || typeof item === 'boolean' || (typeof item === 'number' && Number.isFinite(item));
  if (list.length === 0 || !list.every(scalar)) malformed(`${where} must be a string, number or boolean, or a non-empty array of them`);
  return list.map((item) => String(item));
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

function malformed(reason: string, details: Record<string, unknown> = {}): never {
  throw new SvcError('MalformedPolicy', `The policy is not valid: ${reason}.`, { reason, ...details });
}

/** Whether some condition of the policies names a key that starts with `prefix` (letter case aside): `s3:ExistingObjectTag/`. */
export function policiesMentionKey(policies: readonly Policy[], prefix: string): boolean {
  const lower = prefix.toLowerCase();
  return policies.some((policy) => policy.statements.some((statement) => statement.conditions.some((condition) => condition.key.toLowerCase().startsWith(lower))));
}
