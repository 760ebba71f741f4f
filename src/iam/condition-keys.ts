/**
 * The condition keys, operators and policy variables a policy may use. Key names compare
 * case-insensitively (as AWS compares them) and are stored under the spelling given here; the
 * part after a key prefix (a tag key, a claim name) is kept exactly as written, since tag keys and
 * claim names are case-sensitive.
 */

/** Keys with one fixed name. */
export const conditionKeys = [
  'aws:SourceIp', 'aws:SecureTransport', 'aws:CurrentTime', 'aws:EpochTime', 'aws:username', 'aws:userid', 'aws:PrincipalType',
  'aws:Referer', 'aws:UserAgent',
  's3:prefix', 's3:delimiter', 's3:max-keys', 's3:versionid', 's3:x-amz-acl', 's3:x-amz-storage-class', 's3:x-amz-server-side-encryption',
  's3:signatureversion', 's3:authType', 's3:object-lock-mode', 's3:object-lock-retain-until-date', 's3:object-lock-legal-hold',
  's3:RequestObjectTagKeys',
  // Keys AWS documents that a request here carries a value for.
  'aws:RequestedRegion', 'aws:PrincipalIsAWSService',
  's3:x-amz-server-side-encryption-aws-kms-key-id', 's3:x-amz-server-side-encryption-customer-algorithm', 's3:x-amz-copy-source',
  's3:x-amz-metadata-directive', 's3:x-amz-grant-read', 's3:x-amz-grant-write', 's3:x-amz-grant-read-acp', 's3:x-amz-grant-write-acp',
  's3:x-amz-grant-full-control', 's3:x-amz-content-sha256', 's3:x-amz-object-ownership', 's3:object-lock-remaining-retention-days',
  's3:if-match', 's3:if-none-match',
  // Keys AWS documents that no request here has a value for (networks, organisations, MFA, access
  // points): accepted, and absent when judged, as AWS judges a key the request does not carry.
  'aws:PrincipalArn', 'aws:PrincipalAccount', 'aws:PrincipalOrgID', 'aws:PrincipalServiceName', 'aws:SourceArn', 'aws:SourceAccount',
  'aws:SourceOrgID', 'aws:SourceVpc', 'aws:SourceVpce', 'aws:VpcSourceIp', 'aws:MultiFactorAuthPresent', 'aws:MultiFactorAuthAge',
  'aws:TokenIssueTime', 'aws:ViaAWSService', 'aws:CalledVia', 'aws:CalledViaFirst', 'aws:CalledViaLast', 'aws:TagKeys',
  's3:TlsVersion', 's3:LocationConstraint', 's3:ResourceAccount', 's3:DataAccessPointArn', 's3:DataAccessPointAccount',
  's3:AccessPointNetworkOrigin',
] as const;

/** Keys named by a prefix and a free part: `s3:ExistingObjectTag/<tag key>`, `jwt:<claim>`. */
export const conditionKeyPrefixes = ['s3:ExistingObjectTag/', 's3:RequestObjectTag/', 'jwt:', 'aws:PrincipalTag/', 'aws:RequestTag/', 'aws:ResourceTag/'] as const;

/** The keys `${...}` may name in a Resource or a string condition value (and `jwt:<claim>`). */
export const variableKeys = ['aws:username', 'aws:userid', 'aws:PrincipalType', 'aws:SourceIp'] as const;

export const conditionOperators = [
  'StringEquals', 'StringNotEquals', 'StringEqualsIgnoreCase', 'StringNotEqualsIgnoreCase', 'StringLike', 'StringNotLike',
  'NumericEquals', 'NumericNotEquals', 'NumericLessThan', 'NumericLessThanEquals', 'NumericGreaterThan', 'NumericGreaterThanEquals',
  'DateEquals', 'DateNotEquals', 'DateLessThan', 'DateLessThanEquals', 'DateGreaterThan', 'DateGreaterThanEquals',
  'Bool', 'IpAddress', 'NotIpAddress', 'Null', 'ArnEquals', 'ArnNotEquals', 'ArnLike', 'ArnNotLike',
] as const;

export type ConditionOperator = (typeof conditionOperators)[number];
export const setQualifiers = ['ForAnyValue', 'ForAllValues'] as const;
export type SetQualifier = (typeof setQualifiers)[number];

/** The operators that hold when their positive form does not (and when the key is absent). */
export const negatedOperators: ReadonlySet<ConditionOperator> = new Set([
  'StringNotEquals', 'StringNotEqualsIgnoreCase', 'StringNotLike', 'NumericNotEquals', 'DateNotEquals', 'NotIpAddress', 'ArnNotEquals', 'ArnNotLike',
]);

const byLowerCase = new Map<string, string>(conditionKeys.map((key) => [key.toLowerCase(), key]));

/** A key's stored spelling, or undefined when the key is not one this server knows. */
export function canonicalConditionKey(name: string): string | undefined {
  const fixed = byLowerCase.get(name.toLowerCase());
  if (fixed !== undefined) return fixed;
  const prefix = conditionKeyPrefixes.find((candidate) => name.toLowerCase().startsWith(candidate.toLowerCase()));
  if (prefix === undefined || name.length === prefix.length) return undefined;
  return `${prefix}${name.slice(prefix.length)}`;
}

/** A variable's key in its stored spelling, or undefined when `${name}` is not a policy variable. */
export function canonicalVariableKey(name: string): string | undefined {
  const key = canonicalConditionKey(name);
  if (key === undefined) return undefined;
  return (variableKeys as readonly string[]).includes(key) || key.startsWith('jwt:') ? key : undefined;
}

export interface ParsedOperator {
  operator: ConditionOperator;
  ifExists: boolean;
  qualifier?: SetQualifier;
}

/** `ForAllValues:StringLikeIfExists` into its parts; undefined when the name is not an operator (operator names are case-sensitive). */
export function parseOperatorName(name: string): ParsedOperator | undefined {
  const colon = name.indexOf(':');
  const qualifier = colon < 0 ? undefined : name.slice(0, colon);
  if (qualifier !== undefined && !(setQualifiers as readonly string[]).includes(qualifier)) return undefined;
  const rest = colon < 0 ? name : name.slice(colon + 1);
  const ifExists = rest.endsWith('IfExists');
  const operator = ifExists ? rest.slice(0, -'IfExists'.length) : rest;
  if (!(conditionOperators as readonly string[]).includes(operator)) return undefined;
  return { operator: operator as ConditionOperator, ifExists, ...(qualifier === undefined ? {} : { qualifier: qualifier as SetQualifier }) };
}
