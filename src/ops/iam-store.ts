/**
 * Users and policies: `.svc.sys/iam.bin`, a cluster state file (a whole copy on every drive of
 * every pool, a save needs a majority, a load takes the newest generation), so every node reads
 * the same users. Secret keys are sealed with AES-256-GCM under a key derived from the root
 * credentials: the drives alone never reveal them. Each node keeps the decoded document in
 * memory; a change is saved, then announced to the peers (which reload at once), and every node
 * also reloads on an interval in case it missed a notice.
 */
import { hkdfSync, randomInt } from 'node:crypto';
import { SvcError } from '../errors/index.js';
import { builtInPolicies, builtInPolicyDocument, builtInPolicyNames, isBuiltInPolicy, userNameOf, validatePolicy, type Policy, type Principal } from '../iam/index.js';
import { limits } from '../util/limits.js';
import type { StateStore } from './state-store.js';
import { openText, sealText, SessionTokens, type SessionClaims } from './session-tokens.js';

export interface StoredUser {
  /** base64url(iv | ciphertext | tag) of the secret key. */
  sealedSecret: string;
  enabled: boolean;
  policies: string[];
  createdMs: number;
  /** Console sessions and temporary credentials of this user begun before this instant are over (set when it is added, given a new secret or enabled again). */
  sessionsFromMs?: number;
}

export interface StoredGroup {
  members: string[];
  policies: string[];
  enabled: boolean;
  createdMs: number;
}

export interface StoredServiceAccount {
  /** The user it belongs to: it never holds more than this user may do, and ends with it. */
  parent: string;
  sealedSecret: string;
  enabled: boolean;
  /** An inline policy that narrows the parent's permissions (never widens them). */
  policy?: unknown;
  name?: string;
  description?: string;
  /** Refused from this instant on; undefined: no expiry. */
  expiresMs?: number;
  createdMs: number;
  /** Temporary credentials it assumed before this instant are over (set when it is given a new secret or enabled again). */
  sessionsFromMs?: number;
}

export interface IamDocument {
  generation: number;
  users: Record<string, StoredUser>;
  /** Created in version 2 of the document; absent in older copies (read as none). */
  groups?: Record<string, StoredGroup>;
  serviceAccounts?: Record<string, StoredServiceAccount>;
  /** Policies created by the administrator (built-in ones are not stored): name -> JSON document. */
  policies: Record<string, unknown>;
}

export interface UserInfo {
  accessKey: string;
  enabled: boolean;
  policies: string[];
  /** The groups it is a member of. */
  groups: string[];
  createdMs: number;
}

export interface GroupInfo {
  name: string;
  enabled: boolean;
  members: string[];
  policies: string[];
  createdMs: number;
}

export interface ServiceAccountInfo {
  accessKey: string;
  parent: string;
  enabled: boolean;
  name?: string;
  description?: string;
  /** The inline policy document, when it has one. */
  policy?: unknown;
  expiresMs?: number;
  createdMs: number;
}

/** What a new service account is given; the access key and secret are generated when left out. */
export interface NewServiceAccount {
  accessKey?: string;
  secretKey?: string;
  policy?: unknown;
  name?: string;
  description?: string;
  expiresMs?: number;
}

export interface ServiceAccountChange {
  enabled?: boolean;
  /** null removes the inline policy. */
  policy?: unknown;
  secretKey?: string;
  name?: string;
  description?: string;
  /** null removes the expiry. */
  expiresMs?: number | null;
}

export function validateIamDocument(payload: unknown): IamDocument {
  const document = payload as Partial<IamDocument>;
  if (typeof document?.generation !== 'number' || typeof document.users !== 'object' || typeof document.policies !== 'object') {
    throw new SvcError('CorruptFormat', 'iam.bin: missing generation, users or policies');
  }
  for (const field of ['groups', 'serviceAccounts'] as const) {
    if (document[field] !== undefined && (typeof document[field] !== 'object' || document[field] === null)) throw new SvcError('CorruptFormat', `iam.bin: ${field} is not an object`);
  }
  return document as IamDocument;
}

const accessKeyPattern = /^[A-Za-z0-9\-_.=@]{3,128}$/;
const groupNamePattern = /^[A-Za-z0-9\-_.=@+]{1,128}$/;

/** What a caller asks of a new session (STS parameters, checked by the store). */
export interface SessionRequest {
  /** Default limits.stsDefaultDurationSeconds; outside [stsMin, stsMax]DurationSeconds: ValidationError. */
  durationSeconds?: number;
  /** The session policy's JSON text: PackedPolicyTooLarge above limits.maxSessionPolicyBytes, MalformedPolicyDocument when not a valid policy. */
  policy?: string;
}

/** A web identity whose token was verified (src/ops/web-identity.ts). */
export interface WebIdentity {
  /** The token's `sub`: the session's user is `oidc:<sub>`. */
  subject: string;
  /** The policy names its policy claim holds. */
  policies: string[];
  /** Its string claims, for `jwt:<claim>` condition keys. */
  claims: Record<string, string>;
}

export interface IssuedSession {
  accessKey: string;
  secretKey: string;
  sessionToken: string;
  expiresMs: number;
  /** The user the session acts as (`oidc:<sub>` for a web identity). */
  parent: string;
}

/** A web identity session's user name (`aws:username`): the provider's subject under this prefix, so it never names an IAM user. */
export const webIdentityPrefix = 'oidc:';

/** What a credential resolves to: the secret that signs its requests and the principal it acts as. */
export interface ResolvedCredential {
  secret: string;
  principal: Principal;
}

export class IamStore {
  private document: IamDocument = { generation: 0, users: {}, policies: {} };
  private secrets = new Map<string, string>();
  private parsed = new Map<string, Policy>();
  /** Service accounts' inline policies, parsed once per document. */
  private inline = new Map<string, Policy>();
  private readonly sessionPolicies = new WeakMap<SessionClaims, Policy>();
  private readonly sealKey: Buffer;
  private readonly sessions: SessionTokens;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly options: {
      store: StateStore<IamDocument>;
      root: { accessKey: string; secretKey: string };
      /** Stamps (creation, when sessions may begin from): the wall clock every node shares. */
      nowMs(): number;
      /** What expiry is judged by (service accounts, temporary credentials); the wall clock unless a test moves it. */
      expiryNowMs?(): number;
      /** Tells the other nodes to reload (after a save). */
      announce(): Promise<void>;
      /** The cluster-wide lock that makes changes from different nodes take turns (releases when called back). */
      lock?: () => Promise<() => void>;
    },
  ) {
    this.sealKey = Buffer.from(hkdfSync('sha256', options.root.secretKey, options.root.accessKey, 'svc iam secrets v1', 32));
    this.sessions = new SessionTokens(options.root);
  }

  /** Reads the newest stored document (a node that missed a change catches up here). */
  async reload(): Promise<void> {
    const loaded = await this.options.store.load();
    if (loaded && loaded.generation >= this.document.generation) this.adopt(loaded);
  }

  /**
   * The secret and principal of an access key (with its session token, for temporary
   * credentials); undefined when nothing usable has that key: unknown, disabled, expired, or
   * belonging to a user who is disabled or removed. A session token that this deployment did not
   * seal (altered, another deployment's, of another key) throws InvalidToken; one past its expiry
   * ExpiredToken.
   */
  resolve(accessKey: string, sessionToken?: string): ResolvedCredential | undefined {
    if (sessionToken !== undefined) return this.resolveSession(accessKey, sessionToken);
    const user = this.document.users[accessKey];
    if (user) {
      const secret = this.secrets.get(accessKey);
      return user.enabled && secret !== undefined ? { secret, principal: { kind: 'user', accessKey, grants: this.grantsOf(accessKey), limits: [] } } : undefined;
    }
    const account = this.document.serviceAccounts?.[accessKey];
    const secret = this.secrets.get(accessKey);
    if (!account || secret === undefined || !this.accountUsable(account)) return undefined;
    const inline = this.inline.get(accessKey);
    return { secret, principal: { kind: 'serviceAccount', accessKey, parentUser: account.parent, grants: this.grantsOf(account.parent), limits: inline ? [inline] : [] } };
  }

  /** The secret of a usable credential (signature checks); undefined otherwise. */
  secretFor(accessKey: string, sessionToken?: string): string | undefined {
    return this.resolve(accessKey, sessionToken)?.secret;
  }

  /** When an enabled user's console sessions may have begun at the earliest; undefined when the key is not an enabled user. */
  sessionsFromMs(accessKey: string): number | undefined {
    const user = this.document.users[accessKey];
    return user?.enabled ? (user.sessionsFromMs ?? 0) : undefined;
  }

  /** The policy names an enabled user holds, its own and its enabled groups'. */
  effectivePolicyNames(accessKey: string): string[] {
    const user = this.document.users[accessKey];
    if (!user?.enabled) return [];
    const fromGroups = Object.values(this.document.groups ?? {}).filter((group) => group.enabled && group.members.includes(accessKey)).flatMap((group) => group.policies);
    return [...new Set([...user.policies, ...fromGroups])];
  }

  /** The named policies that exist (built-in or created), and the names that do not. */
  policiesNamed(names: readonly string[]): { policies: Policy[]; unknown: string[] } {
    const policies: Policy[] = [];
    const unknown: string[] = [];
    for (const name of names) {
      const policy = builtInPolicies.get(name) ?? this.parsed.get(name);
      if (policy) policies.push(policy);
      else unknown.push(name);
    }
    return { policies, unknown };
  }

  /** A created or built-in policy's document; undefined when there is none. */
  policyDocument(name: string): unknown {
    return isBuiltInPolicy(name) ? builtInPolicyDocument(name) : this.document.policies[name];
  }

  /** Who holds a policy: users and groups it is attached to. */
  policyHolders(name: string): { users: string[]; groups: string[] } {
    return {
      users: Object.entries(this.document.users).filter(([, user]) => user.policies.includes(name)).map(([key]) => key),
      groups: Object.entries(this.document.groups ?? {}).filter(([, group]) => group.policies.includes(name)).map(([key]) => key),
    };
  }

  listUsers(): UserInfo[] {
    return Object.keys(this.document.users).sort().map((accessKey) => this.infoOf(this.document, accessKey));
  }

  /** One user; undefined when there is none. */
  userInfo(accessKey: string): UserInfo | undefined {
    return this.document.users[accessKey] ? this.infoOf(this.document, accessKey) : undefined;
  }

  listPolicies(): { name: string; builtIn: boolean; document: unknown }[] {
    const created = Object.entries(this.document.policies).map(([name, document]) => ({ name, builtIn: false, document }));
    return [...builtInPolicyNames.map((name) => ({ name, builtIn: true, document: builtInPolicyDocument(name) })), ...created.sort((a, b) => (a.name < b.name ? -1 : 1))];
  }

  listGroups(): GroupInfo[] {
    return Object.keys(this.document.groups ?? {}).sort().map((name) => this.groupInfoOf(this.document, name));
  }

  groupInfo(name: string): GroupInfo | undefined {
    return this.document.groups?.[name] ? this.groupInfoOf(this.document, name) : undefined;
  }

  /** Service accounts, all or those of one user. */
  listServiceAccounts(parent?: string): ServiceAccountInfo[] {
    return Object.entries(this.document.serviceAccounts ?? {})
      .filter(([, account]) => parent === undefined || account.parent === parent)
      .map(([accessKey, account]) => accountInfo(accessKey, account))
      .sort((a, b) => (a.accessKey < b.accessKey ? -1 : 1));
  }

  serviceAccountInfo(accessKey: string): ServiceAccountInfo | undefined {
    const account = this.document.serviceAccounts?.[accessKey];
    return account ? accountInfo(accessKey, account) : undefined;
  }

  /** Adds a user, or replaces the secret of an existing one (its policies and state stay); with `onlyNew`, an existing one is UserAlreadyExists. */
  async addUser(accessKey: string, secretKey: string, policies: string[] = [], options: { onlyNew?: boolean } = {}): Promise<UserInfo> {
    if (!accessKeyPattern.test(accessKey) || secretKey.length < 8 || secretKey.length > 128 || accessKey === this.options.root.accessKey) {
      throw new SvcError('InvalidUserCredentials', undefined, { accessKey });
    }
    return this.change((document) => {
      for (const name of policies) this.requirePolicy(document, name);
      this.requireKeyFree(document, accessKey, 'user');
      const existing = document.users[accessKey];
      if (existing && options.onlyNew === true) throw new SvcError('UserAlreadyExists', `a user with the access key ${accessKey} exists already`, { accessKey });
      document.users[accessKey] = {
        sealedSecret: this.seal(secretKey),
        enabled: existing?.enabled ?? true,
        policies: [...new Set([...(existing?.policies ?? []), ...policies])],
        createdMs: existing?.createdMs ?? this.options.nowMs(),
        sessionsFromMs: this.options.nowMs(),
      };
      return this.infoOf(document, accessKey);
    });
  }

  /** Removes a user with its service accounts and group memberships. */
  async removeUser(accessKey: string): Promise<void> {
    await this.change((document) => {
      this.requireUser(document, accessKey);
      delete document.users[accessKey];
      for (const [key, account] of Object.entries(document.serviceAccounts ?? {})) if (account.parent === accessKey) delete document.serviceAccounts![key];
      for (const group of Object.values(document.groups ?? {})) group.members = group.members.filter((member) => member !== accessKey);
    });
  }

  async setEnabled(accessKey: string, enabled: boolean): Promise<UserInfo> {
    return this.change((document) => {
      const user = this.requireUser(document, accessKey);
      if (enabled && !user.enabled) user.sessionsFromMs = this.options.nowMs();
      user.enabled = enabled;
      return this.infoOf(document, accessKey);
    });
  }

  async createPolicy(name: string, document: unknown): Promise<void> {
    if (isBuiltInPolicy(name)) throw new SvcError('PolicyIsBuiltIn', `${name} is a built-in policy and cannot be replaced.`, { policy: name });
    if (!/^[A-Za-z0-9\-_.+=@]{1,128}$/.test(name)) throw new SvcError('InvalidArgument', 'a policy name is 1 to 128 letters, digits and -_.+=@', { policy: name });
    validatePolicy(document);
    await this.change((stored) => {
      stored.policies[name] = document;
    });
  }

  /** Removes a created policy; refused while a user or group has it attached (PolicyInUse). */
  async removePolicy(name: string): Promise<void> {
    if (isBuiltInPolicy(name)) throw new SvcError('PolicyIsBuiltIn', `${name} is a built-in policy and cannot be removed.`, { policy: name });
    await this.change((document) => {
      this.requirePolicy(document, name);
      const holders = [
        ...Object.entries(document.users).filter(([, user]) => user.policies.includes(name)).map(([accessKey]) => accessKey),
        ...Object.entries(document.groups ?? {}).filter(([, group]) => group.policies.includes(name)).map(([group]) => `group ${group}`),
      ];
      if (holders.length > 0) throw new SvcError('PolicyInUse', `the policy ${name} is attached to ${holders.join(', ')}: detach it first`, { policy: name, users: holders.join(',') });
      delete document.policies[name];
    });
  }

  async attach(accessKey: string, policy: string): Promise<UserInfo> {
    return this.change((document) => {
      this.attachTo(document, this.requireUser(document, accessKey), policy);
      return this.infoOf(document, accessKey);
    });
  }

  async detach(accessKey: string, policy: string): Promise<UserInfo> {
    return this.change((document) => {
      detachFrom(this.requireUser(document, accessKey), policy, `user ${accessKey}`);
      return this.infoOf(document, accessKey);
    });
  }

  async attachToGroup(group: string, policy: string): Promise<GroupInfo> {
    return this.change((document) => {
      this.attachTo(document, this.requireGroup(document, group), policy);
      return this.groupInfoOf(document, group);
    });
  }

  async detachFromGroup(group: string, policy: string): Promise<GroupInfo> {
    return this.change((document) => {
      detachFrom(this.requireGroup(document, group), policy, `group ${group}`);
      return this.groupInfoOf(document, group);
    });
  }

  /** Adds users to a group, creating the group when it does not exist. */
  async addGroupMembers(group: string, members: string[]): Promise<GroupInfo> {
    if (!groupNamePattern.test(group)) throw new SvcError('InvalidArgument', 'a group name is 1 to 128 letters, digits and -_.=@+', { group });
    return this.change((document) => {
      for (const member of members) this.requireUser(document, member);
      const groups = (document.groups ??= {});
      const stored = (groups[group] ??= { members: [], policies: [], enabled: true, createdMs: this.options.nowMs() });
      stored.members = [...new Set([...stored.members, ...members])].sort();
      return this.groupInfoOf(document, group);
    });
  }

  /** Removes members from a group; with no members named, removes the group itself, which must then be empty. */
  async removeGroupMembers(group: string, members: string[]): Promise<GroupInfo | undefined> {
    return this.change((document) => {
      const stored = this.requireGroup(document, group);
      if (members.length === 0) {
        if (stored.members.length > 0) throw new SvcError('GroupNotEmpty', `the group ${group} still has members: ${stored.members.join(', ')}`, { group });
        delete document.groups![group];
        return undefined;
      }
      const strangers = members.filter((member) => !stored.members.includes(member));
      if (strangers.length > 0) throw new SvcError('NoSuchUser', `not members of ${group}: ${strangers.join(', ')}`, { group });
      stored.members = stored.members.filter((member) => !members.includes(member));
      return this.groupInfoOf(document, group);
    });
  }

  async setGroupEnabled(group: string, enabled: boolean): Promise<GroupInfo> {
    return this.change((document) => {
      this.requireGroup(document, group).enabled = enabled;
      return this.groupInfoOf(document, group);
    });
  }

  /** A new service account of `parent`; its secret is in the answer and never again. */
  async addServiceAccount(parent: string, request: NewServiceAccount): Promise<ServiceAccountInfo & { secretKey: string }> {
    const accessKey = request.accessKey ?? randomKey(20);
    const secretKey = request.secretKey ?? randomKey(40);
    if (!accessKeyPattern.test(accessKey) || secretKey.length < 8 || secretKey.length > 128 || accessKey === this.options.root.accessKey) {
      throw new SvcError('InvalidUserCredentials', undefined, { accessKey });
    }
    if (request.policy !== undefined) validatePolicy(request.policy);
    this.checkExpiry(request.expiresMs);
    return this.change((document) => {
      this.requireUser(document, parent);
      this.requireKeyFree(document, accessKey, 'serviceAccount');
      const accounts = (document.serviceAccounts ??= {});
      if (Object.values(accounts).filter((account) => account.parent === parent).length >= limits.maxServiceAccountsPerUser) {
        throw new SvcError('InvalidArgument', `a user has at most ${limits.maxServiceAccountsPerUser} service accounts`, { parent });
      }
      accounts[accessKey] = {
        parent,
        sealedSecret: this.seal(secretKey),
        enabled: true,
        createdMs: this.options.nowMs(),
        ...definedOnly({ policy: request.policy, name: request.name, description: request.description, expiresMs: request.expiresMs }),
      };
      return { ...accountInfo(accessKey, accounts[accessKey]), secretKey };
    });
  }

  async updateServiceAccount(accessKey: string, change: ServiceAccountChange): Promise<ServiceAccountInfo> {
    if (change.policy !== undefined && change.policy !== null) validatePolicy(change.policy);
    if (change.secretKey !== undefined && (change.secretKey.length < 8 || change.secretKey.length > 128)) throw new SvcError('InvalidUserCredentials', undefined, { accessKey });
    if (change.expiresMs !== undefined && change.expiresMs !== null) this.checkExpiry(change.expiresMs);
    return this.change((document) => {
      const account = this.requireServiceAccount(document, accessKey);
      if ((change.enabled === true && !account.enabled) || change.secretKey !== undefined) account.sessionsFromMs = this.options.nowMs();
      if (change.enabled !== undefined) account.enabled = change.enabled;
      if (change.secretKey !== undefined) account.sealedSecret = this.seal(change.secretKey);
      if (change.policy === null) delete account.policy;
      else if (change.policy !== undefined) account.policy = change.policy;
      if (change.expiresMs === null) delete account.expiresMs;
      else if (change.expiresMs !== undefined) account.expiresMs = change.expiresMs;
      if (change.name !== undefined) account.name = change.name;
      if (change.description !== undefined) account.description = change.description;
      return accountInfo(accessKey, account);
    });
  }

  async removeServiceAccount(accessKey: string): Promise<void> {
    await this.change((document) => {
      this.requireServiceAccount(document, accessKey);
      delete document.serviceAccounts![accessKey];
    });
  }

  /**
   * AssumeRole: temporary credentials acting as the caller's user, never more than the caller
   * may do (a service account's inline policy stays a limit), cut down by the session policy.
   * Root and sessions are refused: a session acting as root could not be cut down by a policy,
   * and a session that assumes again would outlive the check on its own expiry.
   */
  assumeRole(caller: Principal, request: SessionRequest): IssuedSession {
    if (caller.kind === 'root') throw new SvcError('AccessDenied', "the root credentials cannot assume a role: sign AssumeRole with a user's or a service account's credentials");
    if (caller.kind !== 'user' && caller.kind !== 'serviceAccount') throw new SvcError('AccessDenied', `a ${caller.kind === 'session' ? 'session' : 'console account'} cannot assume a role: sign AssumeRole with a user's or a service account's credentials`);
    const parent = userNameOf(caller);
    return this.issueSession({ parent, ...(caller.kind === 'serviceAccount' ? { serviceAccount: caller.accessKey } : {}) }, request);
  }

  /** AssumeRoleWithWebIdentity, for a token already verified: the session holds the known policies its claim names (IDPRejectedClaim when none is known). */
  assumeRoleWithWebIdentity(identity: WebIdentity, request: SessionRequest): IssuedSession {
    const { unknown } = this.policiesNamed(identity.policies);
    const known = identity.policies.filter((name) => !unknown.includes(name));
    if (known.length === 0) {
      const named = identity.policies.length === 0 ? 'no policy' : `only policies this deployment does not have (${identity.policies.join(', ')})`;
      throw new SvcError('IDPRejectedClaim', `the web identity ${identity.subject} names ${named}`);
    }
    return this.issueSession({ parent: `${webIdentityPrefix}${identity.subject}`, policies: known, claims: identity.claims }, request);
  }

  /**
   * Nothing is stored: the session token carries the session sealed under a key of the root
   * credentials, so any node accepts it until it expires.
   */
  private issueSession(owner: Pick<SessionClaims, 'parent' | 'serviceAccount' | 'policies' | 'claims'>, request: SessionRequest): IssuedSession {
    const durationSeconds = request.durationSeconds ?? limits.stsDefaultDurationSeconds;
    if (!Number.isInteger(durationSeconds) || durationSeconds < limits.stsMinDurationSeconds || durationSeconds > limits.stsMaxDurationSeconds) {
      throw new SvcError('ValidationError', `DurationSeconds must be a whole number of seconds from ${limits.stsMinDurationSeconds} to ${limits.stsMaxDurationSeconds}`, { parameter: 'DurationSeconds' });
    }
    const claims: SessionClaims = {
      ...owner,
      ...(request.policy === undefined ? {} : { sessionPolicy: checkedSessionPolicy(request.policy) }),
      accessKey: randomKey(20),
      secretKey: randomKey(40),
      issuedMs: this.options.nowMs(),
      expiresMs: this.expiryNowMs() + durationSeconds * 1000,
    };
    return { accessKey: claims.accessKey, secretKey: claims.secretKey, sessionToken: this.sessions.seal(claims), expiresMs: claims.expiresMs, parent: claims.parent };
  }

  /** A session's credential; InvalidToken for a token not sealed here or not of this key, ExpiredToken past its expiry, undefined once its owner cannot sign any more. */
  private resolveSession(accessKey: string, token: string): ResolvedCredential | undefined {
    const claims = this.sessions.open(token);
    if (!claims || claims.accessKey !== accessKey) throw new SvcError('InvalidToken');
    if (claims.expiresMs <= this.expiryNowMs()) throw new SvcError('ExpiredToken');
    const owner = this.sessionOwner(claims);
    if (!owner) return undefined;
    const limits = claims.sessionPolicy === undefined ? owner.limits : [...owner.limits, this.sessionPolicyOf(claims)];
    return {
      secret: claims.secretKey,
      principal: { kind: 'session', accessKey, parentUser: claims.parent, grants: owner.grants, limits, ...(claims.claims ? { claims: claims.claims } : {}) },
    };
  }

  /**
   * What a session's owner holds now: a web identity its named policies; a user its live grants
   * (with a service account's inline limit), while it is enabled and was not given a new secret
   * or enabled again since the session began.
   */
  private sessionOwner(claims: SessionClaims): { grants: Policy[]; limits: Policy[] } | undefined {
    if (claims.policies !== undefined) return { grants: this.policiesNamed(claims.policies).policies, limits: [] };
    const user = this.document.users[claims.parent];
    if (!user?.enabled || claims.issuedMs < (user.sessionsFromMs ?? 0)) return undefined;
    if (claims.serviceAccount === undefined) return { grants: this.grantsOf(claims.parent), limits: [] };
    const account = this.document.serviceAccounts?.[claims.serviceAccount];
    if (!account || account.parent !== claims.parent || !this.accountUsable(account) || claims.issuedMs < (account.sessionsFromMs ?? 0)) return undefined;
    const inline = this.inline.get(claims.serviceAccount);
    return { grants: this.grantsOf(claims.parent), limits: inline ? [inline] : [] };
  }

  private sessionPolicyOf(claims: SessionClaims): Policy {
    let policy = this.sessionPolicies.get(claims);
    if (!policy) {
      policy = parseOr(JSON.parse(claims.sessionPolicy!), { version: '2012-10-17', statements: [] });
      this.sessionPolicies.set(claims, policy);
    }
    return policy;
  }

  /** Changes run one at a time (on this node, and across nodes under the lock), on the newest stored document; then peers are told. */
  private change<T>(mutate: (document: IamDocument) => T): Promise<T> {
    const run = async (): Promise<T> => {
      const release = await this.options.lock?.();
      try {
        await this.reload();
        const next = structuredClone(this.document);
        const result = mutate(next);
        next.generation = this.document.generation + 1;
        await this.options.store.save(next);
        this.adopt(next);
        await this.options.announce();
        return result;
      } finally {
        release?.();
      }
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private adopt(document: IamDocument): void {
    const secrets = new Map<string, string>();
    const sealed = [...Object.entries(document.users), ...Object.entries(document.serviceAccounts ?? {})];
    for (const [accessKey, holder] of sealed) {
      const secret = this.unseal(holder.sealedSecret);
      if (secret !== undefined) secrets.set(accessKey, secret);
    }
    const parsed = new Map<string, Policy>();
    for (const [name, policy] of Object.entries(document.policies)) {
      // Validated when created; a policy this version cannot read grants nothing.
      const readable = parseOr(policy, undefined);
      if (readable) parsed.set(name, readable);
    }
    const inline = new Map<string, Policy>();
    for (const [accessKey, account] of Object.entries(document.serviceAccounts ?? {})) {
      // An inline policy this version cannot read allows nothing (a limit that matches nothing).
      if (account.policy !== undefined) inline.set(accessKey, parseOr(account.policy, { version: '2012-10-17', statements: [] }));
    }
    this.document = document;
    this.secrets = secrets;
    this.parsed = parsed;
    this.inline = inline;
  }

  /** The policies of a user and its enabled groups (a removed or disabled user holds none). */
  private grantsOf(accessKey: string): Policy[] {
    return this.policiesNamed(this.effectivePolicyNames(accessKey)).policies;
  }

  private expiryNowMs(): number {
    return this.options.expiryNowMs?.() ?? this.options.nowMs();
  }

  private accountUsable(account: StoredServiceAccount): boolean {
    const parent = this.document.users[account.parent];
    return account.enabled && parent?.enabled === true && (account.expiresMs === undefined || account.expiresMs > this.expiryNowMs());
  }

  private checkExpiry(expiresMs: number | undefined): void {
    if (expiresMs === undefined) return;
    if (!Number.isFinite(expiresMs) || expiresMs <= this.expiryNowMs()) throw new SvcError('InvalidArgument', 'the expiry must be a time in the future', { field: 'expiry' });
  }

  private attachTo(document: IamDocument, holder: { policies: string[] }, policy: string): void {
    this.requirePolicy(document, policy);
    if (!holder.policies.includes(policy)) holder.policies.push(policy);
  }

  private requireUser(document: IamDocument, accessKey: string): StoredUser {
    const user = document.users[accessKey];
    if (!user) throw new SvcError('NoSuchUser', `no user has the access key ${accessKey}`, { accessKey });
    return user;
  }

  private requireGroup(document: IamDocument, name: string): StoredGroup {
    const group = document.groups?.[name];
    if (!group) throw new SvcError('NoSuchGroup', `no group is named ${name}`, { group: name });
    return group;
  }

  private requireServiceAccount(document: IamDocument, accessKey: string): StoredServiceAccount {
    const account = document.serviceAccounts?.[accessKey];
    if (!account) throw new SvcError('NoSuchServiceAccount', `no service account has the access key ${accessKey}`, { accessKey });
    return account;
  }

  /** One access key names one thing: a user and a service account never share it. */
  private requireKeyFree(document: IamDocument, accessKey: string, kind: 'user' | 'serviceAccount'): void {
    const taken = kind === 'user' ? document.serviceAccounts?.[accessKey] !== undefined : document.users[accessKey] !== undefined || document.serviceAccounts?.[accessKey] !== undefined;
    if (taken) throw new SvcError('UserAlreadyExists', `the access key ${accessKey} is taken`, { accessKey });
  }

  private requirePolicy(document: IamDocument, name: string): void {
    if (!isBuiltInPolicy(name) && document.policies[name] === undefined) throw new SvcError('NoSuchPolicy', undefined, { policy: name });
  }

  private infoOf(document: IamDocument, accessKey: string): UserInfo {
    const user = document.users[accessKey]!;
    const groups = Object.entries(document.groups ?? {}).filter(([, group]) => group.members.includes(accessKey)).map(([name]) => name).sort();
    return { accessKey, enabled: user.enabled, policies: [...user.policies], groups, createdMs: user.createdMs };
  }

  private groupInfoOf(document: IamDocument, name: string): GroupInfo {
    const group = document.groups![name]!;
    return { name, enabled: group.enabled, members: [...group.members], policies: [...group.policies], createdMs: group.createdMs };
  }

  private seal(secret: string): string {
    return sealText(this.sealKey, secret);
  }

  /** Undefined when the secret was sealed under other root credentials (the user cannot sign). */
  private unseal(sealed: string): string | undefined {
    return openText(this.sealKey, sealed);
  }
}

/** A session policy's text, checked: its size, then that it is a policy this server evaluates. */
function checkedSessionPolicy(text: string): string {
  if (Buffer.byteLength(text, 'utf8') > limits.maxSessionPolicyBytes) {
    throw new SvcError('PackedPolicyTooLarge', `the session policy is ${Buffer.byteLength(text, 'utf8')} bytes; at most ${limits.maxSessionPolicyBytes} are allowed`, { parameter: 'Policy' });
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
    validatePolicy(document);
  } catch (error) {
    throw new SvcError('MalformedPolicyDocument', `the session policy is not valid: ${error instanceof Error ? error.message : String(error)}`, { parameter: 'Policy' });
  }
  return text;
}

function detachFrom(holder: { policies: string[] }, policy: string, name: string): void {
  if (!holder.policies.includes(policy)) throw new SvcError('NoSuchPolicy', `${name} has no policy ${policy} attached`, { policy });
  holder.policies = holder.policies.filter((held) => held !== policy);
}

function parseOr<T extends Policy | undefined>(document: unknown, fallback: T): Policy | T {
  try {
    return validatePolicy(document);
  } catch {
    return fallback;
  }
}

function accountInfo(accessKey: string, account: StoredServiceAccount): ServiceAccountInfo {
  return { accessKey, parent: account.parent, enabled: account.enabled, createdMs: account.createdMs, ...definedOnly({ name: account.name, description: account.description, policy: account.policy, expiresMs: account.expiresMs }) };
}

function definedOnly<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** An access key or secret from the alphabet every client accepts. */
function randomKey(length: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let text = '';
  for (let index = 0; index < length; index++) text += alphabet[randomInt(alphabet.length)];
  return text;
}
