/**
 * The policy evaluator. A request is allowed when some statement that applies to it allows it
 * and none denies it: an explicit Deny wins over every Allow, and no matching Allow (or no policy
 * at all) means no access. Identity policies and a bucket policy are judged together the same way.
 * A statement applies when its principal, action (letter case aside), resource (policy variables
 * resolved; one whose variable the request lacks matches nothing) and every condition
 * (src/iam/conditions.ts) match.
 */
import { conditionHolds } from './conditions.js';
import { unitsMatch, wildcardMatch } from './match.js';
import { resolveUnits, type RequestContext } from './variables.js';
import type { Policy, Statement } from './policy.js';

export { wildcardMatch } from './match.js';
export { normaliseIp } from './operands.js';
export type { ContextValue, RequestContext } from './variables.js';

export interface AccessRequest {
  /** `s3:GetObject`, ... */
  action: string;
  /** `arn:aws:s3:::bucket` or `arn:aws:s3:::bucket/key`. */
  resource: string;
  /** The caller's access key; undefined for an anonymous (unsigned) request. */
  principal?: string;
  /**
   * Condition keys of the request (`s3:prefix`, `aws:SourceIp`, ...) in their catalogue spelling
   * (src/iam/condition-keys.ts); a multi-valued key (`s3:RequestObjectTagKeys`) holds a list; a
   * missing key is undefined.
   */
  context: RequestContext;
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
    && statement.resourceTemplates.some((template) => {
      const units = resolveUnits(template, request.context);
      return units !== undefined && unitsMatch(units, request.resource, false);
    })
    && statement.conditions.every((condition) => conditionHolds(condition, request.context));
}

function principalMatches(principals: string[] | undefined, principal: string | undefined): boolean {
  if (principals === undefined) return true;
  return principals.some((name) => name === '*' || (principal !== undefined && (name === principal || name.endsWith(`:user/${principal}`))));
}

function actionMatches(statement: Statement, action: string): boolean {
  if (statement.actions) return statement.actions.some((pattern) => wildcardMatch(pattern, action, true));
  return !statement.notActions!.some((pattern) => wildcardMatch(pattern, action, true));
}
