/**
 * STS on the S3 listener: a POST to `/` with a form body (or `Action=` in the query) is an STS
 * call, answered here before S3 routing. `AssumeRole` is SigV4-signed by a user or service
 * account with the credential scope's service `sts`; `AssumeRoleWithWebIdentity` is unsigned
 * and carries an OpenID Connect ID token. Thin: parse the form, check the signature, make one
 * call (the IAM store issues), write AWS's XML. Answers never carry a request's token or secret
 * anywhere but in the issued credentials.
 */
import { createHash } from 'node:crypto';
import { SvcError, isSvcError } from '../../errors/index.js';
import { limits } from '../../util/limits.js';
import type { Principal } from '../../iam/index.js';
import type { IssuedSession, SessionRequest } from '../../ops/iam-store.js';
import { verifyRequest, type CredentialStore, type SignedRequest } from '../s3/auth/sigv4.js';
import { principalOf, type AccessPolicies } from '../s3/access.js';
import { stsErrorXml, stsResultXml } from './xml.js';

/** What STS calls into (the IAM store, and the web identity verifier before it). */
export interface StsService {
  /** Temporary credentials for a principal whose signature checked out. */
  assumeRole(caller: Principal, request: SessionRequest): IssuedSession;
  /** Temporary credentials for the subject of a verified OpenID Connect ID token. */
  assumeRoleWithWebIdentity(token: string, request: SessionRequest): Promise<IssuedSession & { subject: string }>;
}

export interface StsOptions {
  service: StsService;
  credentials: CredentialStore;
  access: AccessPolicies;
  nowMs(): number;
  logger?: { error(fields: Record<string, unknown>, message: string): void };
}

export interface StsAnswer {
  status: number;
  body: string;
  /** The STS action the form asked for (its audit entry's API), when it named one. */
  action?: string;
}

export type StsRequest = SignedRequest & { body: AsyncIterable<Uint8Array> };

const apiVersion = '2011-06-15';

/** A POST to the service root (no bucket) with a form body or an Action in the query. */
export function isStsRequest(method: string, bucket: string | undefined, query: URLSearchParams, contentType: string | undefined): boolean {
  return method === 'POST' && bucket === undefined && (query.has('Action') || /^application\/x-www-form-urlencoded\b/i.test(contentType ?? ''));
}

/** The answer to an STS call: its result, or an STS ErrorResponse with the code's status. */
export async function handleSts(options: StsOptions, request: StsRequest, requestId: string): Promise<StsAnswer> {
  let action: string | undefined;
  try {
    const body = await readForm(request.body);
    const parameters = parametersOf(request.rawQuery, body);
    action = parameters.get('Action');
    const version = parameters.get('Version');
    if (version !== undefined && version !== apiVersion) throw new SvcError('ValidationError', `Version must be ${apiVersion}`, { parameter: 'Version' });
    switch (action) {
      case 'AssumeRole':
        return { status: 200, body: stsResultXml(action, assumeRole(options, request, body, parameters), requestId), action };
      case 'AssumeRoleWithWebIdentity':
        return { status: 200, body: stsResultXml(action, await assumeRoleWithWebIdentity(options, parameters), requestId), action };
      case undefined:
        throw new SvcError('MissingAction');
      default:
        throw new SvcError('InvalidAction', `${action} is not an STS action this server offers (AssumeRole, AssumeRoleWithWebIdentity)`);
    }
  } catch (error) {
    if (!isSvcError(error)) options.logger?.error({ requestId, error: String(error) }, 'unexpected error in an STS request');
    const known = isSvcError(error) ? error : new SvcError('InternalError');
    return { status: known.httpStatus, body: stsErrorXml(known.code, known.message, known.httpStatus, requestId), ...(action === undefined ? {} : { action }) };
  }
}

function assumeRole(options: StsOptions, request: StsRequest, body: Buffer, parameters: Map<string, string>): Record<string, unknown> {
  const bodySha256 = createHash('sha256').update(body).digest('hex');
  const auth = verifyRequest(request, options.credentials, options.nowMs(), { service: 'sts', bodySha256 });
  // The parameters (a session policy above all) must be covered by the signature.
  if (body.length > 0 && auth.payload.kind !== 'sha256') throw new SvcError('AccessDenied', 'an AssumeRole body must be signed (x-amz-content-sha256 the SHA-256 of the body, or absent)');
  if (auth.payload.kind === 'sha256' && auth.payload.expectedHex !== bodySha256) throw new SvcError('XAmzContentSHA256Mismatch');
  const caller = principalOf(options.access, auth.accessKeyId, auth.sessionToken);
  const sessionName = sessionNameOf(parameters);
  return credentialsResult(options.service.assumeRole(caller, sessionRequestOf(parameters)), sessionName);
}

async function assumeRoleWithWebIdentity(options: StsOptions, parameters: Map<string, string>): Promise<Record<string, unknown>> {
  const token = parameters.get('WebIdentityToken');
  if (token === undefined || token === '') throw new SvcError('ValidationError', 'WebIdentityToken is required', { parameter: 'WebIdentityToken' });
  const sessionName = sessionNameOf(parameters);
  const session = await options.service.assumeRoleWithWebIdentity(token, sessionRequestOf(parameters));
  return { ...credentialsResult(session, sessionName), SubjectFromWebIdentityToken: session.subject };
}

function sessionRequestOf(parameters: Map<string, string>): SessionRequest {
  const duration = parameters.get('DurationSeconds');
  const policy = parameters.get('Policy');
  return {
    ...(duration === undefined ? {} : { durationSeconds: /^\d{1,9}$/.test(duration) ? Number(duration) : Number.NaN }),
    ...(policy === undefined ? {} : { policy }),
  };
}

/** RoleSessionName, when given: 2 to 64 of AWS's characters. It names the session in the answer only. */
function sessionNameOf(parameters: Map<string, string>): string | undefined {
  const name = parameters.get('RoleSessionName');
  if (name !== undefined && !/^[\w+=,.@-]{2,64}$/.test(name)) throw new SvcError('ValidationError', 'RoleSessionName is 2 to 64 letters, digits and +=,.@-_', { parameter: 'RoleSessionName' });
  return name;
}

function credentialsResult(session: IssuedSession, sessionName: string | undefined): Record<string, unknown> {
  const name = sessionName ?? session.accessKey;
  return {
    Credentials: { AccessKeyId: session.accessKey, SecretAccessKey: session.secretKey, SessionToken: session.sessionToken, Expiration: new Date(session.expiresMs).toISOString().replace(/\.\d{3}Z$/, 'Z') },
    AssumedRoleUser: { Arn: `arn:aws:sts:::assumed-role/${session.parent}/${name}`, AssumedRoleId: `${session.accessKey}:${name}` },
  };
}

/** The query's and the form's parameters together; one named in both is refused. */
function parametersOf(rawQuery: string, body: Buffer): Map<string, string> {
  const parameters = new Map<string, string>();
  for (const source of [new URLSearchParams(rawQuery), new URLSearchParams(body.toString('utf8'))]) {
    for (const [name, value] of source) {
      if (name.startsWith('X-Amz-')) continue;
      if (parameters.has(name)) throw new SvcError('ValidationError', `the parameter ${name} is given more than once`, { parameter: name });
      parameters.set(name, value);
    }
  }
  return parameters;
}

async function readForm(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    if (total > limits.maxStsRequestBytes) throw new SvcError('ValidationError', `an STS request body is at most ${limits.maxStsRequestBytes} bytes`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}
