/**
 * Users and policies: `.svc.sys/iam.bin`, a cluster state file (a whole copy on every drive of
 * every pool, a save needs a majority, a load takes the newest generation), so every node reads
 * the same users. Secret keys are sealed with AES-256-GCM under a key derived from the root
 * credentials: the drives alone never reveal them. Each node keeps the decoded document in
 * memory; a change is saved, then announced to the peers (which reload at once), and every node
 * also reloads on an interval in case it missed a notice.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { SvcError } from '../errors/index.js';
import { builtInPolicies, builtInPolicyDocument, builtInPolicyNames, isBuiltInPolicy, validatePolicy, type Policy } from '../iam/index.js';
import type { StateStore } from './state-store.js';

export interface StoredUser {
  /** base64url(iv | ciphertext | tag) of the secret key. */
  sealedSecret: string;
  enabled: boolean;
  policies: string[];
  createdMs: number;
  /** Console sessions of this user signed in before this instant are over (set when it is added, given a new secret or enabled again). */
  sessionsFromMs?: number;
}

export interface IamDocument {
  generation: number;
  users: Record<string, StoredUser>;
  /** Policies created by the administrator (built-in ones are not stored): name -> JSON document. */
  policies: Record<string, unknown>;
}

export interface UserInfo {
  accessKey: string;
  enabled: boolean;
  policies: string[];
  createdMs: number;
}

export function validateIamDocument(payload: unknown): IamDocument {
  const document = payload as Partial<IamDocument>;
  if (typeof document?.generation !== 'number' || typeof document.users !== 'object' || typeof document.policies !== 'object') {
    throw new SvcError('CorruptFormat', 'iam.bin: missing generation, users or policies');
  }
  return document as IamDocument;
}

const accessKeyPattern = /^[A-Za-z0-9\-_.=@]{3,128}$/;

export class IamStore {
  private document: IamDocument = { generation: 0, users: {}, policies: {} };
  private secrets = new Map<string, string>();
  private parsed = new Map<string, Policy>();
  private readonly sealKey: Buffer;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly options: {
      store: StateStore<IamDocument>;
      root: { accessKey: string; secretKey: string };
      nowMs(): number;
      /** Tells the other nodes to reload (after a save). */
      announce(): Promise<void>;
      /** The cluster-wide lock that makes changes from different nodes take turns (releases when called back). */
      lock?: () => Promise<() => void>;
    },
  ) {
    this.sealKey = Buffer.from(hkdfSync('sha256', options.root.secretKey, options.root.accessKey, 'svc iam secrets v1', 32));
  }

  /** Reads the newest stored document (a node that missed a change catches up here). */
  async reload(): Promise<void> {
    const loaded = await this.options.store.load();
    if (loaded && loaded.generation >= this.document.generation) this.adopt(loaded);
  }

  /** The secret of an enabled user (signature checks); undefined otherwise. */
  secretFor(accessKey: string): string | undefined {
    return this.document.users[accessKey]?.enabled ? this.secrets.get(accessKey) : undefined;
  }

  /** When an enabled user's console sessions may have begun at the earliest; undefined when the key is not an enabled user. */
  sessionsFromMs(accessKey: string): number | undefined {
    const user = this.document.users[accessKey];
    return user?.enabled ? (user.sessionsFromMs ?? 0) : undefined;
  }

  /** The policies attached to an enabled user; undefined when the key is not one. */
  userPolicies(accessKey: string): Policy[] | undefined {
    const user = this.document.users[accessKey];
    if (!user?.enabled) return undefined;
    return user.policies.map((name) => builtInPolicies.get(name) ?? this.parsed.get(name)).filter((policy): policy is Policy => policy !== undefined);
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

  listUsers(): UserInfo[] {
    return Object.entries(this.document.users)
      .map(([accessKey, user]) => ({ accessKey, enabled: user.enabled, policies: [...user.policies], createdMs: user.createdMs }))
      .sort((a, b) => (a.accessKey < b.accessKey ? -1 : 1));
  }

  listPolicies(): { name: string; builtIn: boolean; document: unknown }[] {
    const created = Object.entries(this.document.policies).map(([name, document]) => ({ name, builtIn: false, document }));
    return [...builtInPolicyNames.map((name) => ({ name, builtIn: true, document: builtInPolicyDocument(name) })), ...created.sort((a, b) => (a.name < b.name ? -1 : 1))];
  }

  /** Adds a user, or replaces the secret of an existing one (its policies and state stay); with `onlyNew`, an existing one is UserAlreadyExists. */
  async addUser(accessKey: string, secretKey: string, policies: string[] = [], options: { onlyNew?: boolean } = {}): Promise<UserInfo> {
    if (!accessKeyPattern.test(accessKey) || secretKey.length < 8 || secretKey.length > 128 || accessKey === this.options.root.accessKey) {
      throw new SvcError('InvalidUserCredentials', undefined, { accessKey });
    }
    return this.change((document) => {
      for (const name of policies) this.requirePolicy(document, name);
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

  async removeUser(accessKey: string): Promise<void> {
    await this.change((document) => {
      this.requireUser(document, accessKey);
      delete document.users[accessKey];
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

  /** Removes a created policy; refused while a user has it attached (PolicyInUse). */
  async removePolicy(name: string): Promise<void> {
    if (isBuiltInPolicy(name)) throw new SvcError('PolicyIsBuiltIn', `${name} is a built-in policy and cannot be removed.`, { policy: name });
    await this.change((document) => {
      this.requirePolicy(document, name);
      const holders = Object.entries(document.users).filter(([, user]) => user.policies.includes(name)).map(([accessKey]) => accessKey);
      if (holders.length > 0) throw new SvcError('PolicyInUse', `the policy ${name} is attached to ${holders.join(', ')}: detach it first`, { policy: name, users: holders.join(',') });
      delete document.policies[name];
    });
  }

  async attach(accessKey: string, policy: string): Promise<UserInfo> {
    return this.change((document) => {
      this.requirePolicy(document, policy);
      const user = this.requireUser(document, accessKey);
      if (!user.policies.includes(policy)) user.policies.push(policy);
      return this.infoOf(document, accessKey);
    });
  }

  async detach(accessKey: string, policy: string): Promise<UserInfo> {
    return this.change((document) => {
      const user = this.requireUser(document, accessKey);
      if (!user.policies.includes(policy)) throw new SvcError('NoSuchPolicy', `user ${accessKey} has no policy ${policy} attached`, { policy });
      user.policies = user.policies.filter((name) => name !== policy);
      return this.infoOf(document, accessKey);
    });
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
    for (const [accessKey, user] of Object.entries(document.users)) {
      const secret = this.unseal(user.sealedSecret);
      if (secret !== undefined) secrets.set(accessKey, secret);
    }
    const parsed = new Map<string, Policy>();
    for (const [name, policy] of Object.entries(document.policies)) {
      try {
        parsed.set(name, validatePolicy(policy));
      } catch {
        // Validated when created; a policy this version cannot read grants nothing.
      }
    }
    this.document = document;
    this.secrets = secrets;
    this.parsed = parsed;
  }

  private requireUser(document: IamDocument, accessKey: string): StoredUser {
    const user = document.users[accessKey];
    if (!user) throw new SvcError('NoSuchUser', `no user has the access key ${accessKey}`, { accessKey });
    return user;
  }

  private requirePolicy(document: IamDocument, name: string): void {
    if (!isBuiltInPolicy(name) && document.policies[name] === undefined) throw new SvcError('NoSuchPolicy', undefined, { policy: name });
  }

  private infoOf(document: IamDocument, accessKey: string): UserInfo {
    const user = document.users[accessKey]!;
    return { accessKey, enabled: user.enabled, policies: [...user.policies], createdMs: user.createdMs };
  }

  private seal(secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.sealKey, iv);
    const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** Undefined when the secret was sealed under other root credentials (the user cannot sign). */
  private unseal(sealed: string): string | undefined {
    try {
      const bytes = Buffer.from(sealed, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', this.sealKey, bytes.subarray(0, 12));
      decipher.setAuthTag(bytes.subarray(bytes.length - 16));
      return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}
