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
import type { Policy } from '../iam/index.js';
import { authorize, type Permission } from '../api/s3/access.js';
import type { ConsoleContext } from './context.js';
import type { ClientOrigin } from './client-origin.js';
import type { Session } from './session.js';

export type { Permission };

/** Admin actions the console's pages need (the names S3 stores of this kind use). */
export const adminActions = {
  serverInfo: 'admin:ServerInfo',
  heal: 'admin:Heal',
  rebalance: 'admin:Rebalance',
  decommission: 'admin:Decommission',
  listUsers: 'admin:ListUsers',
  createUser: 'admin:CreateUser',
  deleteUser: 'admin:DeleteUser',
  enableUser: 'admin:EnableUser',
  disableUser: 'admin:DisableUser',
  attachPolicy: 'admin:AttachUserOrGroupPolicy',
  listPolicies: 'admin:ListUserPolicies',
  createPolicy: 'admin:CreatePolicy',
  deletePolicy: 'admin:DeletePolicy',
} as const;

/** The console's pages and the action each needs (buckets and the object browser need a session only). */
const pageActions: [page: string, action: string | undefined][] = [
  ['overview', adminActions.serverInfo],
  ['buckets', undefined],
  ['cluster', adminActions.serverInfo],
  ['operations', adminActions.serverInfo],
  ['explorer', adminActions.serverInfo],
  ['users', adminActions.listUsers],
];

export class ConsoleAccess {
  constructor(
    private readonly context: ConsoleContext,
    readonly session: Session,
    /** undefined: the root session, never judged. */
    private readonly policies: readonly Policy[] | undefined,
    readonly origin: ClientOrigin,
  ) {}

  readonly requiredActions: string[] = []; // what this request asked for, for its audit entry
  /** Throws AccessDenied unless every permission is held. `query` carries condition keys such as `prefix`. */
  async require(permissions: Permission[], query: Record<string, string> = {}): Promise<void> {
    this.requiredActions.push(...permissions.map((permission) => permission.action));
    if (this.policies === undefined || permissions.length === 0) return;
    const policies = this.policies;
    try {
      await authorize(
        { objects: this.context.objects(), region: 'us-east-1', nowMs: this.context.nowMs },
        { rootAccessKey: '', userPolicies: () => [...policies] },
        { accessKeyId: this.session.accessKey, sourceIp: this.origin.address, query: new URLSearchParams(query) },
        permissions,
      );
    } catch (error) {
      // The page already shows the code: the message says only what is missing ("No policy allows user ... s3:PutObject on ...").
      if (!(error instanceof SvcError) || error.code !== 'AccessDenied') throw error;
      const reason = error.message.replace(/^Access Denied: n/, 'N');
      throw new SvcError('AccessDenied', reason, { ...error.details });
    }
  }

  async allows(permissions: Permission[], query: Record<string, string> = {}): Promise<boolean> {
    try {
      await this.require(permissions, query);
      return true;
    } catch (error) {
      if (error instanceof SvcError && error.code === 'AccessDenied') return false;
      throw error;
    }
  }

  /** The pages this session may open (the app shows only these). */
  async pages(): Promise<string[]> {
    const open: string[] = [];
    for (const [page, action] of pageActions) if (action === undefined || (await this.allows([{ action }]))) open.push(page);
    return open;
  }
}

/**
 * The policies a session acts with now; throws ConsoleSignInRequired when its user is disabled or
 * removed, or was enabled again, added again or given a new secret after the session began.
 */
export function sessionPolicies(context: ConsoleContext, session: Session): Policy[] | undefined {
  if (session.kind === 'root') return undefined;
  if (session.kind === 'sso') return context.iam().policiesNamed(session.policies).policies;
  const iam = context.iam();
  const policies = iam.userPolicies(session.accessKey);
  const fromMs = iam.sessionsFromMs(session.accessKey);
  if (policies === undefined || fromMs === undefined || session.issuedAtMs < fromMs) {
    throw new SvcError('ConsoleSignInRequired', `the user ${session.accessKey} was disabled, removed or given a new secret: its console session has ended; sign in again`, { accessKey: session.accessKey });
  }
  return policies;
}
