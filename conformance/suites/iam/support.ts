/**
 * What the IAM checks share: a scope that makes uniquely named users, policies, groups and
 * buckets through the admin API with the run's (root) credentials, signs S3 and admin requests
 * as the identities it made, and removes everything it made when the check ends, passed or not.
 * Secrets are generated here and never put into a message.
 */
import { randomBytes } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { errorOf, expectThat, type AdminAnswer, type Target } from '../../runner/check.js';

export const iamPath = '/svc/admin/v4/iam';

export interface Identity {
  accessKey: string;
  secretKey: string;
}

/** A user, service account or the like, with an S3 client signing as it. */
export interface Signer extends Identity {
  s3: S3Client;
}

export const allowDocument = (actions: string[], resources: string[], effect: 'Allow' | 'Deny' = 'Allow') => ({ Version: '2012-10-17', Statement: [{ Effect: effect, Action: actions, Resource: resources }] });

/** The bucket and its objects as policy resources. */
export const bucketResources = (bucket: string) => [`arn:aws:s3:::${bucket}`, `arn:aws:s3:::${bucket}/*`];

const secret = () => randomBytes(18).toString('base64url');

/** A short description of an admin answer, safe to print (an answer that could hold a secret is not echoed). */
export const summary = (answer: AdminAnswer) => `${answer.status} ${typeof answer.body.Code === 'string' ? answer.body.Code : JSON.stringify(answer.body).slice(0, 160)}`;

export class IamScope {
  private readonly users: string[] = [];
  private readonly policies: string[] = [];
  private readonly groups: string[] = [];
  private readonly buckets: string[] = [];
  private readonly clients: S3Client[] = [];

  constructor(readonly target: Target) {}

  /** A name owned by this run, usable as an access key, policy, group or bucket name. */
  name(purpose: string): string {
    return this.target.bucketName(purpose);
  }

  /** A root admin call that must answer 200. */
  async root(method: 'GET' | 'POST', path: string, query = '', body?: unknown): Promise<AdminAnswer> {
    const answer = await this.target.admin(method, `${iamPath}/${path}`, query, body === undefined ? {} : { body: JSON.stringify(body) });
    expectThat(answer.status === 200, `${method} ${path}${query ? `?${query}` : ''} by root answered ${summary(answer)}`);
    return answer;
  }

  /** An admin call signed by `identity`, answered whatever it is. */
  as(identity: Identity, method: 'GET' | 'POST', path: string, query = '', body?: unknown): Promise<AdminAnswer> {
    return this.target.admin(method, path, query, { as: identity, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  }

  signer(identity: Identity): Signer {
    const s3 = this.target.clientFor(identity.accessKey, identity.secretKey);
    this.clients.push(s3);
    return { ...identity, s3 };
  }

  /** A new enabled user holding `policies`, added by root. */
  async user(purpose: string, policies: string[] = []): Promise<Signer> {
    const identity = { accessKey: this.name(purpose), secretKey: secret() };
    this.users.push(identity.accessKey);
    await this.root('POST', 'user/add', '', { ...identity, ...(policies.length > 0 ? { policies } : {}) });
    return this.signer(identity);
  }

  /** Credentials for a user someone else will add; removed at the end if it came to exist. */
  plannedUser(purpose: string): Identity {
    const identity = { accessKey: this.name(purpose), secretKey: secret() };
    this.users.push(identity.accessKey);
    return identity;
  }

  async policy(purpose: string, document: unknown): Promise<string> {
    const name = this.name(purpose);
    this.policies.push(name);
    await this.root('POST', 'policy/create', `name=${encodeURIComponent(name)}`, document);
    return name;
  }

  /** A policy name removed at the end if the target stored it. */
  plannedPolicy(purpose: string): string {
    const name = this.name(purpose);
    this.policies.push(name);
    return name;
  }

  /** A new group (made by adding its first members), holding `policies`. */
  async group(purpose: string, members: string[], policies: string[]): Promise<string> {
    const name = this.name(purpose);
    this.groups.push(name);
    await this.root('POST', 'group/add', `group=${encodeURIComponent(name)}`, { members });
    for (const policy of policies) await this.root('POST', 'policy/attach', `group=${encodeURIComponent(name)}&policy=${encodeURIComponent(policy)}`);
    return name;
  }

  /** A bucket of this run holding `objects` (key to body), written by root. */
  async bucket(purpose: string, objects: Record<string, string>): Promise<string> {
    const bucket = await this.target.makeBucket(purpose);
    this.buckets.push(bucket);
    for (const [key, body] of Object.entries(objects)) await this.target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    return bucket;
  }

  /** Removes users (with their service accounts and memberships), then groups, policies and buckets; what could not be removed. */
  async cleanup(): Promise<string[]> {
    const problems: string[] = [];
    const attempt = async (what: string, call: () => Promise<AdminAnswer | void>, gone: string[] = []) => {
      try {
        const answer = await call();
        if (answer && answer.status !== 200 && !gone.includes(answer.body.Code)) problems.push(`${what}: ${summary(answer)}`);
      } catch (error) {
        problems.push(`${what}: ${(error as Error).message}`);
      }
    };
    for (const user of this.users) await attempt(`remove user ${user}`, () => this.target.admin('POST', `${iamPath}/user/remove`, `accessKey=${encodeURIComponent(user)}`), ['NoSuchUser']);
    for (const group of this.groups) await attempt(`remove group ${group}`, () => this.target.admin('POST', `${iamPath}/group/remove`, `group=${encodeURIComponent(group)}`), ['NoSuchGroup']);
    for (const policy of this.policies) await attempt(`remove policy ${policy}`, () => this.target.admin('POST', `${iamPath}/policy/remove`, `name=${encodeURIComponent(policy)}`), ['NoSuchPolicy']);
    for (const bucket of this.buckets) await attempt(`remove bucket ${bucket}`, () => this.target.dropBucket(bucket));
    for (const client of this.clients) client.destroy();
    return problems;
  }
}

/** Runs `body` in a scope and cleans the scope up whatever happens; a clean-up problem fails an otherwise passing check. */
export async function withIam(target: Target, body: (scope: IamScope) => Promise<void>): Promise<void> {
  const scope = new IamScope(target);
  let failure: unknown;
  try {
    await body(scope);
  } catch (error) {
    failure = error;
  }
  const problems = await scope.cleanup();
  if (failure !== undefined) throw failure;
  expectThat(problems.length === 0, `could not clean up: ${problems.join('; ')}`);
}

export async function readText(s3: S3Client, bucket: string, key: string): Promise<string> {
  const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return object.Body!.transformToString();
}

/** `who` reads `bucket/key` and gets `body`. */
export async function expectReads(who: Signer, bucket: string, key: string, body: string, what: string): Promise<void> {
  const outcome = await readText(who.s3, bucket, key).then(
    (text) => (text === body ? 'ok' : `read ${JSON.stringify(text.slice(0, 40))}`),
    (error: Error) => `was refused with ${error.name}`,
  );
  expectThat(outcome === 'ok', `${what}: GET ${bucket}/${key} ${outcome}`);
}

/** An S3 call refused with 403 AccessDenied. */
export async function expectDenied(call: Promise<unknown>, what: string): Promise<void> {
  const answer = await errorOf(call);
  expectThat(answer.name === 'AccessDenied' && answer.status === 403, `${what} answered ${answer.name}${answer.status ? ` (${answer.status})` : ''}, expected 403 AccessDenied`);
}

/** A credential the target no longer accepts: InvalidAccessKeyId or AccessDenied (403). */
export async function expectRefusedCredential(who: Signer, bucket: string, key: string, what: string): Promise<void> {
  const answer = await errorOf(readText(who.s3, bucket, key));
  expectThat((answer.name === 'InvalidAccessKeyId' || answer.name === 'AccessDenied') && answer.status === 403, `${what}: GET answered ${answer.name}${answer.status ? ` (${answer.status})` : ''}, expected 403 InvalidAccessKeyId or AccessDenied`);
}

/** The admin API's JSON error: this status and code, with a Message and a RequestId. */
export function expectAdminRefusal(answer: AdminAnswer, status: number, code: string, what: string): void {
  expectThat(answer.status === status && answer.body.Code === code, `${what} answered ${summary(answer)}, expected ${status} ${code}`);
  expectThat(typeof answer.body.Message === 'string' && typeof answer.body.RequestId === 'string', `${what}: the JSON error lacks Message or RequestId`);
}
