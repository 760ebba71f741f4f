/**
 * Who a console request acts for, and what it may do. The root session is the super-user; a
 * user's session is judged by the policies the IAM store attaches to it now (read on every
 * request, so a user disabled or removed on any node loses its session at the next call); an
 * SSO session by the policies its claim named at sign-in. Each route names the actions and
 * resources it needs, and they are judged by the very check S3 requests get (the same evaluator,
 * together with the bucket's policy): an explicit Deny wins, no Allow is AccessDenied, and
 * nothing is read or changed.
 */
import { SvcError } from '../errors/index.js';
import { adminAction, rootPrincipal, type Principal } from '../iam/index.js';
import { authorize, holds, type Permission } from '../api/s3/access.js';
import type { ConsoleContext } from './context.js';
import type { ClientOrigin } from './client-origin.js';
import type { Session } from './session.js';

export type { Permission };

/** Admin actions the console's pages need: the catalogue's names (src/iam/actions.ts). */
export const adminActions = adminAction;

/**
 * The console's pages and the action each needs (buckets and the object browser need a session
 * only); a page about a service the deployment may lack (the KMS) is offered only when it has it.
 */
const pageActions: [page: string, action: string | undefined, present?: (context: ConsoleContext) => boolean][] = [
  ['overview', adminActions.serverInfo],
  ['buckets', undefined],
  ['cluster', adminActions.serverInfo],
  ['operations', adminActions.serverInfo],
  ['explorer', adminActions.serverInfo],
  ['users', adminActions.listUsers],
  ['groups', adminActions.listGroups],
  ['service-accounts', adminActions.listServiceAccounts],
  ['kms', adminActions.kmsKeyStatus, (context) => context.admin().kms !== undefined],
];

export class ConsoleAccess {
  constructor(
    private readonly context: ConsoleContext,
    readonly session: Session,
    /** Who the session acts for: root is never judged. */
    readonly principal: Principal,
    readonly origin: ClientOrigin,
  ) {}

  /** What this request asked for, for its audit entry. */
  readonly requiredActions: string[] = [];

  /** Throws AccessDenied unless every permission is held. `query` carries condition keys such as `prefix`. */
  async require(permissions: Permission[], query: Record<string, string> = {}): Promise<void> {
    this.requiredActions.push(...permissions.map((permission) => permission.action));
    if (this.principal.kind === 'root' || permissions.length === 0) return;
    try {
      await authorize({ objects: this.context.objects(), nowMs: this.context.nowMs }, this.caller(query), permissions);
    } catch (error) {
      // The page already shows the code: the message says only what is missing ("No policy allows user ... s3:PutObject on ...").
      if (!(error instanceof SvcError) || error.code !== 'AccessDenied') throw error;
      const reason = error.message.replace(/^Access Denied: n/, 'N');
      throw new SvcError('AccessDenied', reason, { ...error.details });
    }
  }

  /** Whether the permissions are held, and if not why (authorize's message), without counting them as asked for. */
  async judge(permissions: Permission[], query: Record<string, string> = {}): Promise<{ allowed: boolean; reason?: string }> {
    if (this.principal.kind === 'root' || permissions.length === 0) return { allowed: true };
    try {
      await authorize({ objects: this.context.objects(), nowMs: this.context.nowMs }, this.caller(query), permissions);
      return { allowed: true };
    } catch (error) {
      if (!(error instanceof SvcError) || error.code !== 'AccessDenied') throw error;
      return { allowed: false, reason: error.message.replace(/^Access Denied: n/, 'N') };
    }
  }

  async allows(permissions: Permission[], query: Record<string, string> = {}): Promise<boolean> {
    if (this.principal.kind === 'root' || permissions.length === 0) return true;
    return holds({ objects: this.context.objects(), nowMs: this.context.nowMs }, this.caller(query), permissions);
  }

  /** The request as the evaluator sees it (the session's principal, the client's address, condition keys). */
  caller(query: Record<string, string> = {}): { principal: Principal; sourceIp: string; query: URLSearchParams } {
    return { principal: this.principal, sourceIp: this.origin.address, query: new URLSearchParams(query) };
  }

  /** The pages this session may open (the app shows only these). */
  async pages(): Promise<string[]> {
    const open: string[] = [];
    for (const [page, action, present] of pageActions) {
      if (present && !present(this.context)) continue;
      if (action === undefined || (await this.allows([{ action }]))) open.push(page);
    }
    return open;
  }
}

/**
 * Who a session acts for now; throws ConsoleSignInRequired when its user is disabled or removed,
 * or was enabled again, added again or given a new secret after the session began.
 */
export function sessionPrincipal(context: ConsoleContext, session: Session): Principal {
  if (session.kind === 'root') return rootPrincipal(session.accessKey);
  const iam = context.iam();
  if (session.kind === 'sso') return { kind: 'sso', accessKey: session.accessKey, grants: iam.policiesNamed(session.policies).policies, limits: [] };
  const principal = iam.resolve(session.accessKey)?.principal;
  const fromMs = iam.sessionsFromMs(session.accessKey);
  if (principal?.kind !== 'user' || fromMs === undefined || session.issuedAtMs < fromMs) {
    throw new SvcError('ConsoleSignInRequired', `the user ${session.accessKey} was disabled, removed or given a new secret: its console session has ended; sign in again`, { accessKey: session.accessKey });
  }
  return principal;
}
