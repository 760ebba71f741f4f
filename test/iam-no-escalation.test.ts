/**
 * No escalation, as a property (fast-check, seeded): from random users, groups, policies and
 * service accounts, any sequence of IAM calls a non-root caller makes through the admin API, the
 * console API or `rc` never leaves it holding a credential (its own, a user it created or gave a
 * new secret, a service account it made, an STS session it assumed) whose permissions exceed what the caller could already
 * reach with the admin rights it held: everything with admin:AttachUserOrGroupPolicy (it may
 * attach consoleAdmin to itself), the groups' grants with admin:AddUserToGroup (disabled groups'
 * only with admin:EnableGroup too), and otherwise its own permissions. Permissions are judged on a fixed set of actions and resources
 * by a small model of the rules (a user's and its enabled groups' policies, Deny wins, a service
 * account cut down by its inline policy, a session by its session policy), from the state the
 * server reports after the calls. That the server applies a session's and an account's limits to
 * the requests they sign is shown by test/sts.test.ts and test/iam-identities.test.ts.
 *
 * SVC_PROPERTY_RUNS sets the number of runs (default 25); SVC_PROPERTY_SEED replays one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testCredentials } from './helpers/server-process.js';
import { signIn, startConsoleServer, type ConsoleServer, type ConsoleSession } from './helpers/console-client.js';
import { admin } from './helpers/admin-client.js';
import { rcIn } from './helpers/rc-process.js';
import { credentialsOf, stsCall, type StsCredentials } from './helpers/sts-client.js';

const iam = '/svc/admin/v4/iam';
const runs = Number(process.env.SVC_PROPERTY_RUNS ?? 25);
const seed = Number(process.env.SVC_PROPERTY_SEED ?? Date.now() % 2 ** 31);
let root: string;
let running: ConsoleServer;
const client = rcIn(() => join(root, 'home'));

const adminPool = [
  'admin:AttachUserOrGroupPolicy', 'admin:CreateUser', 'admin:CreatePolicy', 'admin:AddUserToGroup', 'admin:RemoveUserFromGroup', 'admin:EnableGroup', 'admin:DisableGroup',
  'admin:CreateServiceAccount', 'admin:UpdateServiceAccount', 'admin:EnableUser', 'admin:DisableUser', 'admin:DeleteUser',
];
const s3Pool = ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:ListBucket', 's3:*'];
const resources = ['*', 'arn:aws:s3:::b1/*', 'arn:aws:s3:::b2/*', 'arn:aws:s3:::b1'];
/** What permissions are judged on: every admin action of the pool and a few S3 actions on two buckets. */
const probes: [string, string][] = [
  ...[...adminPool, 'admin:ServerInfo', 'admin:ListUsers'].map((action): [string, string] => [action, 'arn:aws:s3:::*']),
  ...['s3:GetObject', 's3:PutObject', 's3:DeleteObject'].flatMap((action) => ['arn:aws:s3:::b1/x', 'arn:aws:s3:::b2/x'].map((resource): [string, string] => [action, resource])),
  ['s3:ListBucket', 'arn:aws:s3:::b1'], ['s3:ListBucket', 'arn:aws:s3:::b2'],
];

type Doc = { Version: string; Statement: { Effect: 'Allow' | 'Deny'; Action: string[]; Resource: string[] }[] };
const statement = fc.record({ Effect: fc.constantFrom<'Allow' | 'Deny'>('Allow', 'Allow', 'Allow', 'Deny'), Action: fc.uniqueArray(fc.constantFrom(...adminPool, ...s3Pool), { minLength: 1, maxLength: 3 }), Resource: fc.subarray(resources, { minLength: 1 }) });
const doc = fc.array(statement, { minLength: 1, maxLength: 2 }).map((Statement): Doc => ({ Version: '2012-10-17', Statement }));

/** One IAM call the caller tries; names are indexes into the run's users, policies and groups. */
type Call =
  | { op: 'addUser'; user: number; policies: number[]; surface: Surface }
  | { op: 'attach' | 'detach'; policy: number; user?: number; group?: number; surface: Surface }
  | { op: 'createPolicy'; policy: number; document: Doc; surface: Surface }
  | { op: 'groupAdd' | 'groupRemove'; group: number; users: number[]; surface: Surface }
  | { op: 'groupEnable' | 'groupDisable' | 'userEnable' | 'userDisable'; group: number; user: number; surface: Surface }
  | { op: 'svcacct'; user: number; inline: Doc | null; surface: Surface }
  | { op: 'assumeRole'; policy: Doc | null; surface: Surface };
type Surface = 'admin' | 'console' | 'rc' | 'sts';

const surface = fc.constantFrom<Surface>('admin', 'admin', 'console', 'rc');
const index = fc.nat({ max: 3 });
const call: fc.Arbitrary<Call> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('addUser' as const), user: fc.nat({ max: 5 }), policies: fc.uniqueArray(fc.nat({ max: 4 }), { maxLength: 2 }), surface }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('svcacct' as const), user: index, inline: fc.option(doc, { nil: null }), surface: fc.constantFrom<Surface>('admin', 'rc') }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant('assumeRole' as const), policy: fc.option(doc, { nil: null, freq: 1 }), surface: fc.constant<Surface>('sts') }), weight: 2 },
  fc.record({ op: fc.constantFrom('attach' as const, 'detach' as const), policy: fc.nat({ max: 4 }), user: index, surface }),
  fc.record({ op: fc.constantFrom('attach' as const, 'detach' as const), policy: fc.nat({ max: 4 }), group: fc.nat({ max: 1 }), surface: fc.constant<Surface>('admin') }),
  fc.record({ op: fc.constant('createPolicy' as const), policy: fc.nat({ max: 3 }), document: doc, surface }),
  fc.record({ op: fc.constantFrom('groupAdd' as const, 'groupRemove' as const), group: fc.nat({ max: 1 }), users: fc.uniqueArray(index, { minLength: 1, maxLength: 2 }), surface: fc.constant<Surface>('admin') }),
  fc.record({ op: fc.constantFrom('groupEnable' as const, 'groupDisable' as const, 'userEnable' as const, 'userDisable' as const), group: fc.nat({ max: 1 }), user: index, surface: fc.constantFrom<Surface>('admin', 'rc') }),
);

/** The starting state: policies, users (user 0 is the caller), groups. */
const world = fc.record({
  policies: fc.array(doc, { minLength: 3, maxLength: 3 }),
  userPolicies: fc.array(fc.uniqueArray(fc.nat({ max: 4 }), { maxLength: 2 }), { minLength: 3, maxLength: 3 }),
  groups: fc.array(fc.record({ members: fc.uniqueArray(fc.nat({ max: 2 }), { maxLength: 3 }), policies: fc.uniqueArray(fc.nat({ max: 4 }), { maxLength: 2 }), enabled: fc.boolean() }), { minLength: 2, maxLength: 2 }),
  /** The caller's own admin rights (beyond its random policies), each held with even odds. */
  callerActions: fc.subarray(adminPool),
  callerIsServiceAccount: fc.boolean(),
  callerInline: fc.option(doc, { nil: null }),
  calls: fc.array(call, { minLength: 3, maxLength: 8 }),
});

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-no-escalation-'));
  running = await startConsoleServer([join(root, 'd{1...4}')]);
  await client.ok('alias', 'set', 'root', running.server.url, testCredentials.accessKeyId, testCredentials.secretAccessKey);
}, 120_000);

afterAll(async () => {
  await running?.server.kill();
  if (root) await rm(root, { recursive: true, force: true });
});

async function rootCall(method: 'GET' | 'POST', path: string, query = '', body?: unknown): Promise<Record<string, any>> {
  const answer = await admin(running.server.url, method, path, query, body === undefined ? {} : { body: JSON.stringify(body) });
  if (answer.status !== 200) throw new Error(`${method} ${path}?${query}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

// ---- the model -------------------------------------------------------------------------------

const glob = (pattern: string, text: string, ignoreCase: boolean) => new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, ignoreCase ? 'i' : '').test(text);
const matches = (document: Doc, effect: 'Allow' | 'Deny', [action, resource]: [string, string]) =>
  document.Statement.some((item) => item.Effect === effect && item.Action.some((pattern) => glob(pattern, action, true)) && item.Resource.some((pattern) => glob(pattern, resource, false)));
const allows = (documents: Doc[], probe: [string, string]) => documents.some((document) => matches(document, 'Allow', probe)) && !documents.some((document) => matches(document, 'Deny', probe));

interface State {
  users: Record<string, { enabled: boolean; policies: string[]; groups: string[] }>;
  groups: Record<string, { enabled: boolean; policies: string[] }>;
  documents: Record<string, Doc>;
  accounts: Record<string, { parent: string; enabled: boolean; policy?: Doc }>;
}

async function stateNow(): Promise<State> {
  const users = (await rootCall('GET', `${iam}/users`)).users as { accessKey: string; enabled: boolean; policies: string[]; groups: string[] }[];
  const groups = (await rootCall('GET', `${iam}/groups`)).groups as { name: string; enabled: boolean; policies: string[] }[];
  const policies = (await rootCall('GET', `${iam}/policies`)).policies as { name: string; document: Doc }[];
  const accounts = (await rootCall('GET', `${iam}/svcacct/list`, 'all=true')).serviceAccounts as { accessKey: string; parent: string; enabled: boolean; policy?: Doc }[];
  return {
    users: Object.fromEntries(users.map((user) => [user.accessKey, user])),
    groups: Object.fromEntries(groups.map((group) => [group.name, group])),
    documents: Object.fromEntries(policies.map((policy) => [policy.name, policy.document])),
    accounts: Object.fromEntries(accounts.map((account) => [account.accessKey, account])),
  };
}

function grantsOf(state: State, user: string): Doc[] {
  const record = state.users[user];
  if (!record?.enabled) return [];
  const names = [...record.policies, ...record.groups.filter((group) => state.groups[group]?.enabled).flatMap((group) => state.groups[group]!.policies)];
  return names.map((name) => state.documents[name]).filter((document): document is Doc => document !== undefined);
}

/** A session the caller assumed: its own key's permissions, cut down by the session policy. */
interface HeldSession {
  owner: string;
  policy: Doc | null;
}

/** The probes a credential may do in a state (a user's, a service account's, or a session's). */
function effectiveOf(state: State, held: string | HeldSession): Set<number> {
  if (typeof held === 'string') return effective(state, held);
  const owner = effective(state, held.owner);
  return new Set([...owner].filter((at) => held.policy === null || allows([held.policy], probes[at]!)));
}

function effective(state: State, accessKey: string): Set<number> {
  const account = state.accounts[accessKey];
  const grants = grantsOf(state, account ? account.parent : accessKey);
  const usable = account ? account.enabled : true;
  return new Set(probes.flatMap((probe, at) => (usable && allows(grants, probe) && (!account?.policy || allows([account.policy], probe)) ? [at] : [])));
}

/** What the caller could reach with the admin rights it held at the start (an upper bound: Deny ignored where it could be lifted). */
function reach(state: State, caller: string): Set<number> {
  const own = effective(state, caller);
  const holds = (action: string) => own.has(probes.findIndex(([name]) => name === action));
  if (holds('admin:AttachUserOrGroupPolicy')) return new Set(probes.map((_probe, at) => at));
  // A member gets an enabled group's policies; a disabled one's too when the caller may enable groups.
  const extra = holds('admin:AddUserToGroup')
    ? Object.values(state.groups).filter((group) => group.enabled || holds('admin:EnableGroup')).flatMap((group) => group.policies.map((name) => state.documents[name]).filter((document): document is Doc => document !== undefined))
    : [];
  return new Set([...own, ...probes.flatMap((probe, at) => (extra.some((document) => matches(document, 'Allow', probe)) ? [at] : []))]);
}

/** A session's credentials are accepted: its call is answered, or refused for want of an action, never for its credentials. */
async function sessionWorks(credentials: StsCredentials): Promise<boolean> {
  const answer = await admin(running.server.url, 'GET', `${iam}/svcacct/list`, '', { credentials: credentials as { accessKeyId: string; secretAccessKey: string; sessionToken?: string } });
  return answer.status === 200 || answer.body.Code === 'AccessDenied' && !/InvalidAccessKeyId|InvalidToken|ExpiredToken/.test(String(answer.body.Message));
}

// ---- one run ---------------------------------------------------------------------------------

let runNumber = 0;

type World = typeof world extends fc.Arbitrary<infer T> ? T : never;

async function runOnce(input: World): Promise<void> {
  const tag = `r${++runNumber}`;
  const user = (at: number) => `${tag}u${at}`;
  const policyName = (at: number) => (at < 3 ? `${tag}p${at}` : ['readonly', 'consoleAdmin'][at - 3]!);
  const group = (at: number) => `${tag}g${at}`;
  for (const [at, document] of input.policies.entries()) await rootCall('POST', `${iam}/policy/create`, `name=${policyName(at)}`, document);
  if (input.callerActions.length > 0) await rootCall('POST', `${iam}/policy/create`, `name=${tag}admin`, { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: input.callerActions, Resource: ['*'] }] });
  for (const [at, held] of input.userPolicies.entries()) {
    const policies = [...held.map(policyName), ...(at === 0 && input.callerActions.length > 0 ? [`${tag}admin`] : [])];
    await rootCall('POST', `${iam}/user/add`, '', { accessKey: user(at), secretKey: `${user(at)}-secret`, policies });
  }
  for (const [at, spec] of input.groups.entries()) {
    if (spec.members.length === 0) continue;
    await rootCall('POST', `${iam}/group/add`, `group=${group(at)}`, { members: spec.members.map(user) });
    for (const held of spec.policies) await rootCall('POST', `${iam}/policy/attach`, `group=${group(at)}&policy=${policyName(held)}`);
    if (!spec.enabled) await rootCall('POST', `${iam}/group/disable`, `group=${group(at)}`);
  }
  let caller = { accessKeyId: user(0), secretAccessKey: `${user(0)}-secret` };
  if (input.callerIsServiceAccount) {
    const made = await rootCall('POST', `${iam}/svcacct/add`, '', { parent: user(0), ...(input.callerInline ? { policy: input.callerInline } : {}) });
    caller = { accessKeyId: made.serviceAccount.accessKey, secretAccessKey: made.serviceAccount.secretKey };
  }
  const before = await stateNow();
  const bound = reach(before, caller.accessKeyId);
  const controlled = new Set<string | HeldSession>([caller.accessKeyId]);
  await client.ok('alias', 'set', tag, running.server.url, caller.accessKeyId, caller.secretAccessKey);
  const session = input.callerIsServiceAccount ? undefined : await signIn(running.consoleUrl, { accessKey: caller.accessKeyId, secretKey: caller.secretAccessKey });
  for (const step of input.calls) {
    const made = await attempt(step, { tag, caller, session, user, policyName, group });
    if (made) controlled.add(made);
  }
  const after = await stateNow();
  for (const held of controlled) {
    const gained = [...effectiveOf(after, held)].filter((at) => !bound.has(at)).map((at) => probes[at]!.join(' on '));
    const name = typeof held === 'string' ? held : `a session of ${held.owner}`;
    expect(gained, `${name} (controlled by ${caller.accessKeyId}) exceeds its reach after ${JSON.stringify(input.calls)}`).toEqual([]);
  }
}

interface Names {
  tag: string;
  caller: { accessKeyId: string; secretAccessKey: string };
  session: ConsoleSession | undefined;
  user(at: number): string;
  policyName(at: number): string;
  group(at: number): string;
}

/** Makes one call through its surface; returns a credential the caller now holds, if the call made one. */
async function attempt(step: Call, names: Names): Promise<string | HeldSession | undefined> {
  const through = step.surface === 'console' && names.session === undefined ? 'admin' : step.surface;
  const signedAdmin = async (method: 'GET' | 'POST', path: string, query: string, body?: unknown) =>
    admin(running.server.url, method, path, query, { credentials: names.caller, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const rc = (...args: string[]) => client.rc(...args);
  switch (step.op) {
    case 'addUser': {
      const accessKey = names.user(step.user);
      const body = { accessKey, secretKey: `${accessKey}-taken`, policies: step.policies.map(names.policyName) };
      const status = through === 'console' ? (await names.session!.call('POST', 'users', { body })).status : through === 'rc' ? ((await rc('admin', 'user', 'add', names.tag, accessKey, body.secretKey, ...(body.policies.length > 0 ? ['--policy', body.policies.join(',')] : []))).code === 0 ? 200 : 403) : (await signedAdmin('POST', `${iam}/user/add`, '', body)).status;
      return status === 200 ? accessKey : undefined;
    }
    case 'attach':
    case 'detach': {
      const policy = names.policyName(step.policy);
      if (step.group !== undefined) return void (await signedAdmin('POST', `${iam}/policy/${step.op}`, `policy=${policy}&group=${names.group(step.group)}`));
      const target = names.user(step.user!);
      if (through === 'console') await names.session!.call(step.op === 'attach' ? 'PUT' : 'DELETE', `users/${target}/policies/${policy}`);
      else if (through === 'rc') await rc('admin', 'policy', step.op, names.tag, policy, target);
      else await signedAdmin('POST', `${iam}/policy/${step.op}`, `policy=${policy}&accessKey=${target}`);
      return undefined;
    }
    case 'createPolicy': {
      const name = names.policyName(step.policy);
      if (through === 'console') await names.session!.call('PUT', `policies/${name}`, { body: { document: JSON.stringify(step.document) } });
      else if (through === 'rc') {
        const file = join(root, `${names.tag}-${name}.json`);
        await writeFile(file, JSON.stringify(step.document));
        await rc('admin', 'policy', 'create', names.tag, name, file);
      } else await signedAdmin('POST', `${iam}/policy/create`, `name=${name}`, step.document);
      return undefined;
    }
    case 'groupAdd':
    case 'groupRemove':
      await signedAdmin('POST', `${iam}/group/${step.op === 'groupAdd' ? 'add' : 'remove'}`, `group=${names.group(step.group)}`, { members: step.users.map(names.user) });
      return undefined;
    case 'groupEnable':
    case 'groupDisable':
    case 'userEnable':
    case 'userDisable': {
      const [kind, verb] = [step.op.startsWith('group') ? 'group' : 'user', step.op.endsWith('Enable') ? 'enable' : 'disable'];
      const target = kind === 'group' ? names.group(step.group) : names.user(step.user);
      if (through === 'rc') await rc('admin', kind, verb, names.tag, target);
      else await signedAdmin('POST', `${iam}/${kind}/${verb}`, kind === 'group' ? `group=${target}` : `accessKey=${target}`);
      return undefined;
    }
    case 'assumeRole': {
      const answer = await stsCall(running.server.url, { Action: 'AssumeRole', DurationSeconds: '900', ...(step.policy ? { Policy: JSON.stringify(step.policy) } : {}) }, names.caller);
      if (answer.status !== 200) return undefined;
      // The session's permissions are judged from the state after the calls: whatever its owner holds then, cut by its policy.
      expect(await sessionWorks(credentialsOf(answer))).toBe(true);
      return { owner: names.caller.accessKeyId, policy: step.policy };
    }
    case 'svcacct': {
      const answer = await signedAdmin('POST', `${iam}/svcacct/add`, '', { parent: names.user(step.user), ...(step.inline ? { policy: step.inline } : {}) });
      return answer.status === 200 ? String(answer.body.serviceAccount.accessKey) : undefined;
    }
  }
}

describe('no IAM call sequence escalates a non-root caller', () => {
  it(`holds over ${runs} random worlds and call sequences (seed ${seed})`, async () => {
    try {
      await fc.assert(fc.asyncProperty(world, runOnce), { numRuns: runs, seed, endOnFailure: true });
    } catch (error) {
      console.error(`no-escalation property failed; replay with SVC_PROPERTY_SEED=${seed}`);
      throw error;
    }
  }, 600_000);
});
