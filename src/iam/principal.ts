/**
 * Who a request acts for, and the one decision every surface makes about it. A principal is the
 * root credentials (never judged), a user, a service account or a temporary session, or nobody
 * (anonymous). Its permissions are the union of its grants (a user's own policies and its
 * groups'), cut down by each of its limits (a service account's inline policy, a session
 * policy): an action is allowed when the grants or the bucket's policy allow it, every limit
 * allows it too, and nothing denies it.
 */
import { evaluatePolicies, type AccessRequest } from './evaluate.js';
import type { Policy } from './policy.js';

export type PrincipalKind = 'root' | 'user' | 'serviceAccount' | 'session' | 'sso';

export interface Principal {
  kind: PrincipalKind;
  /** The access key the request was signed with (`sso:<name>` for an SSO console session). */
  accessKey: string;
  /** The user a service account or session belongs to; `${aws:username}` resolves to it. */
  parentUser?: string;
  /** Policies whose union grants (undefined for root: everything). */
  grants?: readonly Policy[];
  /** Each of these must also allow (a service account's inline policy, a session policy). */
  limits: readonly Policy[];
  /** Claims of a web-identity session (`jwt:<claim>` condition keys). */
  claims?: Readonly<Record<string, string>>;
}

/** One action a request needs, on a bucket or object (neither: the whole deployment, `arn:aws:s3:::*`). */
export interface Permission {
  action: string;
  bucket?: string;
  key?: string;
}

export const rootPrincipal = (accessKey: string): Principal => ({ kind: 'root', accessKey, limits: [] });

/** The name policies see as `aws:username`: the user itself, or the user a credential belongs to. */
export function userNameOf(principal: Principal): string {
  return principal.parentUser ?? principal.accessKey;
}

/**
 * Allow, Deny or NoMatch for one action of one principal (undefined: anonymous), with the
 * bucket's policy when the resource has one. An explicit Deny anywhere wins.
 */
export function decide(principal: Principal | undefined, bucketPolicy: Policy | undefined, request: AccessRequest): 'Allow' | 'Deny' | 'NoMatch' {
  if (principal?.kind === 'root') return 'Allow';
  const grants = principal?.grants ?? [];
  const granted = evaluatePolicies(bucketPolicy ? [...grants, bucketPolicy] : grants, request);
  if (granted !== 'Allow') return granted;
  for (const limit of principal?.limits ?? []) {
    const limited = evaluatePolicies([limit], request);
    if (limited !== 'Allow') return limited === 'Deny' ? 'Deny' : 'NoMatch';
  }
  return 'Allow';
}

/** Whether a principal holds an action on the whole deployment, judged without request facts (conditions on them do not hold). */
export function holdsAction(principal: Principal, action: string): boolean {
  return decide(principal, undefined, { action, resource: 'arn:aws:s3:::*', principal: principal.accessKey, context: { 'aws:username': userNameOf(principal) } }) === 'Allow';
}
