/**
 * The policy evaluator. A request is allowed when some statement that applies to it allows it
 * and none denies it: an explicit Deny wins over every Allow, and no matching Allow (or no policy
 * at all) means no access. Identity policies and a bucket policy are judged together the same way.
 */
import { BlockList, isIP } from 'node:net';
import type { Condition, Policy, Statement } from './policy.js';

export interface AccessRequest {
  /** `s3:GetObject`, ... */
  action: string;
  /** `arn:aws:s3:::bucket` or `arn:aws:s3:::bucket/key`. */
  resource: string;
  /** The caller's access key; undefined for an anonymous (unsigned) request. */
  principal?: string;
  /** Condition keys of the request (`s3:prefix`, `aws:SourceIp`, ...); a missing key is undefined. */
  context: Readonly<Record<string, string | undefined>>;
}

export type Decision = 'Allow' | 'Deny' | 'NoMatch';

export function evaluatePolicies(policies: readonly Policy[], request: AccessRequest): Decision {
  let allowed = false;
  for (const policy of policies) {
    for (const statement of policy.statements) {
      if (!statementApplies(statement, request)) continue;
      if (statement.effect === 'Deny') return 'Deny';
      allowed = true;
    }
  }
  return allowed ? 'Allow' : 'NoMatch';
}

export function isAllowed(policies: readonly Policy[], request: AccessRequest): boolean {
  return evaluatePolicies(policies, request) === 'Allow';
}

function statementApplies(statement: Statement, request: AccessRequest): boolean {
  return principalMatches(statement.principals, request.principal)
    && actionMatches(statement, request.action)
    && statement.resources.some((resource) => wildcardMatch(resource, request.resource, false))
    && statement.conditions.every((condition) => conditionHolds(condition, request.context[condition.key]));
}

function principalMatches(principals: string[] | undefined, principal: string | undefined): boolean {
  if (principals === undefined) return true;
  return principals.some((name) => name === '*' || (principal !== undefined && (name === principal || name.endsWith(`:user/${principal}`))));
}

function actionMatches(statement: Statement, action: string): boolean {
  if (statement.actions) return statement.actions.some((pattern) => wildcardMatch(pattern, action, true));
  return !statement.notActions!.some((pattern) => wildcardMatch(pattern, action, true));
}

function conditionHolds(condition: Condition, value: string | undefined): boolean {
  if (value === undefined) return condition.ifExists || condition.operator.includes('Not');
  switch (condition.operator) {
    case 'StringEquals':
      return condition.values.includes(value);
    case 'StringNotEquals':
      return !condition.values.includes(value);
    case 'StringLike':
      return condition.values.some((pattern) => wildcardMatch(pattern, value, false));
    case 'StringNotLike':
      return !condition.values.some((pattern) => wildcardMatch(pattern, value, false));
    case 'IpAddress':
      return ipInAny(condition.values, value);
    case 'NotIpAddress':
      return !ipInAny(condition.values, value);
  }
}

/** `*` matches any run of characters (slashes included), `?` exactly one. */
export function wildcardMatch(pattern: string, text: string, ignoreCase: boolean): boolean {
  const p = ignoreCase ? pattern.toLowerCase() : pattern;
  const t = ignoreCase ? text.toLowerCase() : text;
  // Iterative glob with one backtrack point: linear in practice, no regular expression built from input.
  let pi = 0;
  let ti = 0;
  let starAt = -1;
  let resumeAt = 0;
  while (ti < t.length) {
    if (pi < p.length && (p[pi] === '?' || p[pi] === t[ti])) {
      pi++;
      ti++;
    } else if (pi < p.length && p[pi] === '*') {
      starAt = pi++;
      resumeAt = ti;
    } else if (starAt >= 0) {
      pi = starAt + 1;
      ti = ++resumeAt;
    } else {
      return false;
    }
  }
  while (pi < p.length && p[pi] === '*') pi++;
  return pi === p.length;
}

/** Client addresses arrive as IPv4-mapped IPv6 on dual-stack sockets: judge them as IPv4. */
export function normaliseIp(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

function ipInAny(cidrs: string[], address: string): boolean {
  const ip = normaliseIp(address);
  const family = isIP(ip);
  if (family === 0) return false;
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [base, bits] = cidr.split('/');
    const baseFamily = isIP(base!);
    const type = baseFamily === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(base!, type);
    else list.addSubnet(base!, Number(bits), type);
  }
  return list.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}
