/**
 * The authorization matrix, generated from the routes' own declarations: for every admin route
 * (src/api/admin/routes.ts and its parts), every console route (its `config.access`) and every
 * S3 endpoint kind (the router's declaration, src/api/s3/access.ts `permissionsOf`), a user
 * holding exactly the actions the route declares passes, and a user missing any one of them is refused with 403 AccessDenied in the admin API's
 * JSON shape (the console's, S3's XML), with nothing it asked for done (the IAM state, the objects and the operations'
 * status read back unchanged). Each route is called with its schema's own example; the fixture
 * holds what the examples name (user alice with policies in group staff, whose policies hold a
 * Deny; policy photos-read held by alice; a service account of alice's; bucket photos).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { CreateBucketCommand, GetBucketPolicyCommand, GetBucketVersioningCommand, GetObjectTaggingCommand, ListBucketsCommand, ListMultipartUploadsCommand, ListObjectVersionsCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '@aws-crypto/sha256-js';
import { queryString, send, type RawResponse } from './helpers/raw-s3.js';
import { routeS3Request, type S3Endpoint } from '../src/api/s3/router.js';
import { permissionsOf } from '../src/api/s3/access.js';
import { s3ClientFor } from './helpers/server-process.js';
import { signIn, startConsoleServer, type ConsoleServer } from './helpers/console-client.js';
import type { ConsoleRouteAccess } from '../src/console/route-access.js';
import { consoleRouteAccess } from '../scripts/access-reference.js';
import { admin, type AdminAnswer } from './helpers/admin-client.js';
import { adminRoutes } from '../src/api/admin/routes.js';
import type { AdminRoute } from '../src/api/admin/context.js';

const iam = '/svc/admin/v4/iam';
let running: ConsoleServer;
let server: ConsoleServer['server'];
let root: string;
let principals = 0;

/** Actions an example does not need although its route declares them (the conditional rule does not ask them of this call). */
const notNeededByExample: Record<string, string[]> = {
  // The example names no versionId: reading the latest version is s3:GetObject.
  'GET /svc/admin/v4/object/placement': ['s3:GetObjectVersion'],
};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-authz-matrix-'));
  running = await startConsoleServer([`${root}/p1/d{1...4}`, `${root}/p2/d{1...4}`], { SVC_DRIVE_BACKEND: 'memfs', SVC_FAULT_INJECTION: 'on' });
  server = running.server;
  await ensureFixture();
}, 120_000);

afterAll(async () => {
  await server?.kill();
  if (root) await rm(root, { recursive: true, force: true });
});

/** What the examples name, made again before each surface's turn (the allowed calls of one change it). */
async function ensureFixture(): Promise<void> {
  // The admin examples move the identity clock an hour on (faults/clock): back to the wall clock.
  await rootCall('POST', '/svc/admin/v4/faults/clock', '', { offsetMs: 0 });
  const s3 = s3ClientFor(server.url);
  for (const Bucket of ['photos', 'spare']) await s3.send(new CreateBucketCommand({ Bucket })).catch((error: { name?: string }) => expect(error.name).toBe('BucketAlreadyOwnedByYou'));
  for (const key of ['cat.jpg', '2026/dog.jpg']) await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: key, Body: `bytes of ${key}` }));
  const noTrash = { Version: '2012-10-17', Statement: [{ Effect: 'Deny', Action: ['s3:DeleteObject'], Resource: ['arn:aws:s3:::photos/*'] }] };
  const photosRead = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: ['arn:aws:s3:::photos/*'] }] };
  await rootCall('POST', `${iam}/user/add`, '', { accessKey: 'alice', secretKey: 'alice-secret-1', policies: ['readonly'] });
  await rootCall('POST', `${iam}/policy/create`, 'name=photos-read', photosRead);
  await rootCall('POST', `${iam}/policy/create`, 'name=no-trash', noTrash);
  await rootCall('POST', `${iam}/policy/attach`, 'accessKey=alice&policy=photos-read');
  await rootCall('POST', `${iam}/group/add`, 'group=staff', { members: ['alice'] });
  await rootCall('POST', `${iam}/policy/attach`, 'group=staff&policy=no-trash');
  await rootCall('POST', `${iam}/user/enable`, 'accessKey=alice');
  await rootCall('POST', `${iam}/group/enable`, 'group=staff');
  if ((await admin(server.url, 'GET', `${iam}/svcacct/info`, 'accessKey=Q3AM3UQ867SPQQA43P2F')).status !== 200) await rootCall('POST', `${iam}/svcacct/add`, '', { parent: 'alice', accessKey: 'Q3AM3UQ867SPQQA43P2F', name: 'backup' });
  await rootCall('POST', `${iam}/user/add`, '', { accessKey: 'victim', secretKey: 'victim-secret-1' });
  await rootCall('POST', `${iam}/policy/create`, 'name=unused', photosRead);
}

async function rootCall(method: 'GET' | 'POST', path: string, query = '', body?: unknown): Promise<AdminAnswer> {
  const answer = await admin(server.url, method, path, query, body === undefined ? {} : { body: JSON.stringify(body) });
  expect(answer.status, `${method} ${path}?${query}: ${JSON.stringify(answer.body)}`).toBe(200);
  return answer;
}

/** A new user whose only policy allows exactly these actions, everywhere. */
async function principalHolding(actions: string[]): Promise<{ accessKeyId: string; secretAccessKey: string }> {
  const name = `matrix-${++principals}`;
  const credentials = { accessKeyId: name, secretAccessKey: `${name}-secret` };
  const policies: string[] = [];
  if (actions.length > 0) {
    await rootCall('POST', `${iam}/policy/create`, `name=${name}`, { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: actions, Resource: ['*'] }] });
    policies.push(name);
  }
  await rootCall('POST', `${iam}/user/add`, '', { accessKey: name, secretKey: credentials.secretAccessKey, policies });
  return credentials;
}

/** The route's example as a request: its path with parameters filled in, its query and body. */
function exampleOf(route: AdminRoute): { path: string; query: string; body?: string } {
  const example = route.schema.example;
  let path = route.path;
  for (const [name, value] of Object.entries(example.params ?? {})) path = path.replace(name === '*' ? '*' : `:${name}`, value);
  return { path, query: example.query ?? '', ...(example.body !== undefined ? { body: JSON.stringify(example.body) } : {}) };
}

/** What a refused call must leave as it was: users, groups, service accounts, policies, objects, operations. */
async function snapshot(): Promise<string> {
  const reads = await Promise.all(
    [`${iam}/users`, `${iam}/groups`, `${iam}/policies`, '/svc/admin/v3/rebalance/status', '/svc/admin/v3/decommission/status', '/svc/admin/v4/lifecycle/status'].map((path) => admin(server.url, 'GET', path)),
  );
  const accounts = await admin(server.url, 'GET', `${iam}/svcacct/list`, 'all=true');
  const objects = await s3ClientFor(server.url).send(new ListObjectVersionsCommand({ Bucket: 'photos' }));
  const buckets = await s3ClientFor(server.url).send(new ListBucketsCommand({}));
  const uploads = await s3ClientFor(server.url).send(new ListMultipartUploadsCommand({ Bucket: 'photos' }));
  const stable = (body: Record<string, any>) => JSON.stringify(body, (key, value) => (['generatedAt', 'nextCycleAt', 'elapsed'].includes(key) ? undefined : value));
  const listing = [(objects.Versions ?? []).map((version) => [version.Key, version.VersionId, version.ETag]), (buckets.Buckets ?? []).map((bucket) => bucket.Name), (uploads.Uploads ?? []).map((upload) => upload.Key)];
  return [...reads, accounts].map((answer) => stable(answer.body)).join('\n') + JSON.stringify(listing);
}

function declared(route: AdminRoute): string[] {
  return [...new Set([...route.access.actions, ...(route.access.conditional?.actions ?? [])])];
}

const name = (route: AdminRoute) => `${route.method} ${route.path}`;

describe('admin API: every route refuses a caller missing any declared action, and lets one holding them all through', () => {
  it('every route declares at least one action or a rule, and only actions of known services', () => {
    for (const route of adminRoutes) {
      expect(route.access.actions.length + (route.access.conditional?.actions.length ?? 0), name(route)).toBeGreaterThan(0);
      for (const action of declared(route)) expect(action, name(route)).toMatch(/^(admin|s3):[A-Za-z]+$/);
    }
  });

  it('missing any one declared action: 403 AccessDenied and nothing changed', async () => {
    for (const route of adminRoutes) {
      const example = exampleOf(route);
      const skipped = notNeededByExample[name(route)] ?? [];
      for (const missing of declared(route).filter((action) => !skipped.includes(action))) {
        const caller = await principalHolding(declared(route).filter((action) => action !== missing));
        const before = route.method === 'POST' ? await snapshot() : '';
        const answer = await admin(server.url, route.method, example.path, example.query, { credentials: caller, ...(example.body !== undefined ? { body: example.body } : {}) });
        expect(answer.status, `${name(route)} without ${missing}: ${JSON.stringify(answer.body)}`).toBe(403);
        expect(answer.body).toMatchObject({ Code: 'AccessDenied', Resource: example.path });
        expect(answer.body.Message).toContain(missing);
        if (route.method === 'POST') expect(await snapshot(), `${name(route)} without ${missing} changed state`).toBe(before);
      }
    }
  });

  it('holding exactly the declared actions: not refused', async () => {
    // Reads first, then changes, each with its example (a change may fail for its own reasons, never for access).
    const ordered = [...adminRoutes.filter((route) => route.method === 'GET'), ...adminRoutes.filter((route) => route.method === 'POST')];
    for (const route of ordered) {
      const example = exampleOf(route);
      const caller = await principalHolding(declared(route));
      const answer = await admin(server.url, route.method, example.path, example.query, { credentials: caller, ...(example.body !== undefined ? { body: example.body } : {}) });
      expect(answer.status, `${name(route)} with ${declared(route).join(', ')}: ${JSON.stringify(answer.body)}`).not.toBe(403);
    }
  });
});

const consoleRoutes = consoleRouteAccess;

/** A console request that exercises each route's access (admin routes run in-process use the admin examples). */
const consoleExamples: Record<string, { path: string; body?: unknown; raw?: string; skip?: string[] }> = {
  'POST buckets': { path: 'buckets', body: { name: 'matrix-made' }, skip: ['s3:PutBucketObjectLockConfiguration', 's3:PutBucketVersioning'] },
  'PUT buckets/:bucket/versioning': { path: 'buckets/photos/versioning', body: { status: 'enabled' } },
  'DELETE buckets/:bucket': { path: 'buckets/spare', skip: ['s3:DeleteObjectVersion', 's3:AbortMultipartUpload'] },
  'GET buckets/:bucket/objects': { path: 'buckets/photos/objects', skip: ['s3:ListBucketVersions'] },
  'GET buckets/:bucket/object': { path: 'buckets/photos/object?key=cat.jpg', skip: ['s3:ListBucketVersions'] },
  'GET buckets/:bucket/download': { path: 'buckets/photos/download?key=cat.jpg', skip: ['s3:GetObjectVersion'] },
  'GET buckets/:bucket/preview': { path: 'buckets/photos/preview?key=cat.jpg', skip: ['s3:GetObjectVersion'] },
  'POST buckets/:bucket/delete': { path: 'buckets/photos/delete', body: { objects: [{ key: '2026/dog.jpg' }] }, skip: ['s3:DeleteObjectVersion'] },
  'POST buckets/:bucket/share': { path: 'buckets/photos/share', body: { key: 'cat.jpg', expiresSeconds: 60 }, skip: ['s3:GetObjectVersion'] },
  'POST plan': { path: 'plan', body: { patterns: ['/plan/d{1...4}'] } },
  'PUT buckets/:bucket/objects': { path: 'buckets/photos/objects?key=new.txt', raw: 'new' },
  'POST buckets/:bucket/uploads': { path: 'buckets/photos/uploads', body: { key: 'big.bin' } },
  'PUT buckets/:bucket/uploads/:uploadId/parts/:partNumber': { path: 'buckets/photos/uploads/no-such-upload/parts/1?key=big.bin', raw: 'part' },
  'POST buckets/:bucket/uploads/:uploadId/complete': { path: 'buckets/photos/uploads/no-such-upload/complete', body: { key: 'big.bin', parts: [{ partNumber: 1, etag: 'x' }] } },
  'DELETE buckets/:bucket/uploads/:uploadId': { path: 'buckets/photos/uploads/no-such-upload?key=big.bin' },
  'GET users': { path: 'users' },
  'POST users': { path: 'users', body: { accessKey: 'matrix-made', secretKey: 'matrix-made-secret', policies: ['readonly'] } },
  'DELETE users/:accessKey': { path: 'users/victim' },
  'PUT users/:accessKey/enabled': { path: 'users/alice/enabled', body: { enabled: false }, skip: ['admin:EnableUser'] },
  'PUT users/:accessKey/policies/:policy': { path: 'users/alice/policies/unused' },
  'DELETE users/:accessKey/policies/:policy': { path: 'users/alice/policies/photos-read' },
  'GET policies': { path: 'policies' },
  'PUT policies/:name': { path: 'policies/photos-read', body: { document: JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: ['arn:aws:s3:::photos/*'] }] }) } },
  'DELETE policies/:name': { path: 'policies/unused' },
  'GET overview': { path: 'overview' },
  'GET audit': { path: 'audit' },
  'GET health': { path: 'health' },
  'GET buckets/:bucket/policy-status': { path: 'buckets/photos/policy-status' },
  'GET buckets/:bucket/contents': { path: 'buckets/photos/contents', skip: ['s3:ListBucketMultipartUploads'] },
  'POST buckets/:bucket/restore': { path: 'buckets/photos/restore', body: { key: 'cat.jpg', versionId: 'null' } },
  'PUT buckets/:bucket/tags': { path: 'buckets/photos/tags', body: { key: 'cat.jpg', tags: [{ key: 'team', value: 'web' }] }, skip: ['s3:DeleteObjectTagging'] },
  'PUT buckets/:bucket/metadata': { path: 'buckets/photos/metadata', body: { key: 'cat.jpg', contentType: 'image/jpeg' } },
  'POST buckets/:bucket/folder': { path: 'buckets/photos/folder', body: { key: 'matrix-folder/' } },
  'GET buckets/:bucket/prefix-summary': { path: 'buckets/photos/prefix-summary?prefix=2026/', skip: ['s3:ListBucketVersions'] },
  'POST buckets/:bucket/delete-prefix': { path: 'buckets/photos/delete-prefix', body: { prefix: 'nothing-here/' }, skip: ['s3:DeleteObject', 's3:ListBucketVersions', 's3:DeleteObjectVersion'] },
  'GET sessions': { path: 'sessions?all=true' },
  'DELETE sessions/:handle': { path: 'sessions/no-such-session' },
  // Each bucket setting: read it, send a document S3's parser refuses (nothing is stored), remove it.
  ...Object.fromEntries(
    ['policy', 'lifecycle', 'cors', 'tagging', 'encryption', 'object-lock', 'public-access-block', 'notification', 'replication'].flatMap((setting) => [
      [`GET buckets/:bucket/settings/${setting}`, { path: `buckets/photos/settings/${setting}` }],
      [`PUT buckets/:bucket/settings/${setting}`, { path: `buckets/photos/settings/${setting}`, body: { document: 'not a document' } }],
      [`DELETE buckets/:bucket/settings/${setting}`, { path: `buckets/photos/settings/${setting}` }],
    ]),
  ),
};

/** The console's request for a route: its own example, or the admin route's example under admin/. */
function consoleRequestOf(route: { method: string; url: string; access: ConsoleRouteAccess }): { path: string; body?: unknown; raw?: string; skip: string[] } | undefined {
  if ('adminRoute' in route.access) {
    const adminRoute = adminRoutes.find((candidate) => candidate.method === route.method && `admin/${candidate.path.slice('/svc/admin/'.length)}` === route.url);
    if (!adminRoute) return undefined;
    const example = exampleOf(adminRoute);
    return { path: `admin/${example.path.slice('/svc/admin/'.length)}${example.query ? `?${example.query}` : ''}`, ...(example.body !== undefined ? { body: JSON.parse(example.body) } : {}), skip: notNeededByExample[name(adminRoute)] ?? [] };
  }
  const example = consoleExamples[`${route.method} ${route.url}`];
  return example ? { skip: [], ...example } : undefined;
}

function consoleDeclared(access: ConsoleRouteAccess): string[] {
  if ('adminRoute' in access) return declared({ access: access.adminRoute } as AdminRoute);
  return 'actions' in access ? [...new Set([...access.actions, ...(access.conditional?.actions ?? [])])] : [];
}

describe('console API: every route declares its access, refuses a session missing any declared action, and lets one holding them all through', () => {
  beforeAll(ensureFixture);

  it('every route with actions has an example here (a new route without one fails this test)', async () => {
    const missingExamples = (await consoleRoutes()).filter((route) => consoleDeclared(route.access).length > 0 && !consoleRequestOf(route)).map((route) => `${route.method} ${route.url}`);
    expect(missingExamples).toEqual([]);
  });

  it('missing any one declared action: 403 AccessDenied and nothing changed', async () => {
    for (const route of await consoleRoutes()) {
      const request = consoleRequestOf(route);
      if (!request) continue;
      const actions = consoleDeclared(route.access);
      for (const missing of actions.filter((action) => !request.skip.includes(action))) {
        const caller = await principalHolding(actions.filter((action) => action !== missing));
        const session = await signIn(running.consoleUrl, { accessKey: caller.accessKeyId, secretKey: caller.secretAccessKey });
        const before = route.method === 'GET' ? '' : await snapshot();
        const answer = await session.call(route.method, request.path, { ...(request.body !== undefined ? { body: request.body } : {}), ...(request.raw !== undefined ? { raw: request.raw } : {}) });
        expect(answer.status, `console ${route.method} ${route.url} without ${missing}: ${JSON.stringify(answer.body)}`).toBe(403);
        expect(answer.body.Code).toBe('AccessDenied');
        if (route.method !== 'GET') expect(await snapshot(), `console ${route.method} ${route.url} without ${missing} changed state`).toBe(before);
      }
    }
  });

  it('holding exactly the declared actions: not refused', async () => {
    const routes = (await consoleRoutes()).filter((route) => consoleRequestOf(route) !== undefined);
    for (const route of [...routes.filter((entry) => entry.method === 'GET'), ...routes.filter((entry) => entry.method !== 'GET')]) {
      const request = consoleRequestOf(route)!;
      const caller = await principalHolding(consoleDeclared(route.access));
      const session = await signIn(running.consoleUrl, { accessKey: caller.accessKeyId, secretKey: caller.secretAccessKey });
      const answer = await session.call(route.method, request.path, { ...(request.body !== undefined ? { body: request.body } : {}), ...(request.raw !== undefined ? { raw: request.raw } : {}) });
      expect(answer.status, `console ${route.method} ${route.url}: ${JSON.stringify(answer.body)}`).not.toBe(403);
    }
  });
});

/** One request of each S3 endpoint kind (a kind missing here does not compile: the table is total). */
type S3Example = { method: string; path: string; query?: Record<string, string>; headers?: Record<string, string>; body?: string };
const xml = '<?xml version="1.0" encoding="UTF-8"?>';
const s3Examples: Record<Exclude<S3Endpoint['kind'], 'NotImplemented'>, S3Example> = {
  ListBuckets: { method: 'GET', path: '/' },
  CreateBucket: { method: 'PUT', path: '/matrix-s3-made' },
  DeleteBucket: { method: 'DELETE', path: '/spare' },
  HeadBucket: { method: 'HEAD', path: '/photos' },
  GetBucketLocation: { method: 'GET', path: '/photos', query: { location: '' } },
  GetBucketVersioning: { method: 'GET', path: '/photos', query: { versioning: '' } },
  PutBucketVersioning: { method: 'PUT', path: '/photos', query: { versioning: '' }, body: `${xml}<VersioningConfiguration><Status>Suspended</Status></VersioningConfiguration>` },
  ListObjectsV1: { method: 'GET', path: '/photos' },
  ListObjectsV2: { method: 'GET', path: '/photos', query: { 'list-type': '2' } },
  ListObjectVersions: { method: 'GET', path: '/photos', query: { versions: '' } },
  ListMultipartUploads: { method: 'GET', path: '/photos', query: { uploads: '' } },
  GetBucketAcl: { method: 'GET', path: '/photos', query: { acl: '' } },
  PutBucketAcl: { method: 'PUT', path: '/photos', query: { acl: '' }, headers: { 'x-amz-acl': 'private' } },
  GetBucketCors: { method: 'GET', path: '/photos', query: { cors: '' } },
  PutBucketCors: { method: 'PUT', path: '/photos', query: { cors: '' }, body: `${xml}<CORSConfiguration><CORSRule><AllowedMethod>GET</AllowedMethod><AllowedOrigin>*</AllowedOrigin></CORSRule></CORSConfiguration>` },
  DeleteBucketCors: { method: 'DELETE', path: '/photos', query: { cors: '' } },
  GetBucketTagging: { method: 'GET', path: '/photos', query: { tagging: '' } },
  GetPublicAccessBlock: { method: 'GET', path: '/photos', query: { publicAccessBlock: '' } },
  PutPublicAccessBlock: { method: 'PUT', path: '/photos', query: { publicAccessBlock: '' }, body: `${xml}<PublicAccessBlockConfiguration><BlockPublicAcls>true</BlockPublicAcls></PublicAccessBlockConfiguration>` },
  DeletePublicAccessBlock: { method: 'DELETE', path: '/photos', query: { publicAccessBlock: '' } },
  PutBucketTagging: { method: 'PUT', path: '/photos', query: { tagging: '' }, body: `${xml}<Tagging><TagSet><Tag><Key>team</Key><Value>blue</Value></Tag></TagSet></Tagging>` },
  DeleteBucketTagging: { method: 'DELETE', path: '/photos', query: { tagging: '' } },
  GetBucketNotificationConfiguration: { method: 'GET', path: '/photos', query: { notification: '' } },
  PutBucketNotificationConfiguration: { method: 'PUT', path: '/photos', query: { notification: '' }, body: `${xml}<NotificationConfiguration></NotificationConfiguration>` },
  GetBucketEncryption: { method: 'GET', path: '/photos', query: { encryption: '' } },
  PutBucketEncryption: { method: 'PUT', path: '/photos', query: { encryption: '' }, body: `${xml}<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm></ApplyServerSideEncryptionByDefault></Rule></ServerSideEncryptionConfiguration>` },
  DeleteBucketEncryption: { method: 'DELETE', path: '/photos', query: { encryption: '' } },
  GetBucketPolicy: { method: 'GET', path: '/photos', query: { policy: '' } },
  PutBucketPolicy: { method: 'PUT', path: '/photos', query: { policy: '' }, body: JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: '*', Action: ['s3:GetObject'], Resource: ['arn:aws:s3:::photos/public/*'] }] }) },
  DeleteBucketPolicy: { method: 'DELETE', path: '/photos', query: { policy: '' } },
  GetBucketPolicyStatus: { method: 'GET', path: '/photos', query: { policyStatus: '' } },
  GetObjectLockConfiguration: { method: 'GET', path: '/photos', query: { 'object-lock': '' } },
  PutObjectLockConfiguration: { method: 'PUT', path: '/photos', query: { 'object-lock': '' }, body: `${xml}<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled></ObjectLockConfiguration>` },
  GetBucketLifecycleConfiguration: { method: 'GET', path: '/photos', query: { lifecycle: '' } },
  PutBucketLifecycleConfiguration: { method: 'PUT', path: '/photos', query: { lifecycle: '' }, body: `${xml}<LifecycleConfiguration><Rule><ID>r</ID><Filter><Prefix>tmp/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>` },
  DeleteBucketLifecycle: { method: 'DELETE', path: '/photos', query: { lifecycle: '' } },
  GetBucketOwnershipControls: { method: 'GET', path: '/photos', query: { ownershipControls: '' } },
  PutBucketOwnershipControls: { method: 'PUT', path: '/photos', query: { ownershipControls: '' }, body: `${xml}<OwnershipControls><Rule><ObjectOwnership>BucketOwnerEnforced</ObjectOwnership></Rule></OwnershipControls>` },
  DeleteBucketOwnershipControls: { method: 'DELETE', path: '/photos', query: { ownershipControls: '' } },
  GetBucketLogging: { method: 'GET', path: '/photos', query: { logging: '' } },
  PutBucketLogging: { method: 'PUT', path: '/photos', query: { logging: '' }, body: `${xml}<BucketLoggingStatus/>` },
  GetBucketReplication: { method: 'GET', path: '/photos', query: { replication: '' } },
  PutBucketReplication: { method: 'PUT', path: '/photos', query: { replication: '' }, body: `${xml}<ReplicationConfiguration><Role/><Rule><Status>Enabled</Status><Destination><Bucket>arn:aws:s3:::elsewhere</Bucket></Destination></Rule></ReplicationConfiguration>` },
  DeleteBucketReplication: { method: 'DELETE', path: '/photos', query: { replication: '' } },
  DeleteObjects: { method: 'POST', path: '/photos', query: { delete: '' }, body: `${xml}<Delete><Object><Key>2026/dog.jpg</Key></Object></Delete>` },
  PutObject: { method: 'PUT', path: '/photos/made.txt', body: 'made' },
  GetObject: { method: 'GET', path: '/photos/cat.jpg' },
  HeadObject: { method: 'HEAD', path: '/photos/cat.jpg' },
  DeleteObject: { method: 'DELETE', path: '/photos/2026/dog.jpg' },
  CopyObject: { method: 'PUT', path: '/photos/copy.jpg', headers: { 'x-amz-copy-source': '/photos/cat.jpg' } },
  CreateMultipartUpload: { method: 'POST', path: '/photos/big.bin', query: { uploads: '' } },
  UploadPart: { method: 'PUT', path: '/photos/big.bin', query: { partNumber: '1', uploadId: 'no-such-upload' }, body: 'part' },
  UploadPartCopy: { method: 'PUT', path: '/photos/big.bin', query: { partNumber: '1', uploadId: 'no-such-upload' }, headers: { 'x-amz-copy-source': '/photos/cat.jpg' } },
  CompleteMultipartUpload: { method: 'POST', path: '/photos/big.bin', query: { uploadId: 'no-such-upload' }, body: `${xml}<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"x"</ETag></Part></CompleteMultipartUpload>` },
  AbortMultipartUpload: { method: 'DELETE', path: '/photos/big.bin', query: { uploadId: 'no-such-upload' } },
  ListParts: { method: 'GET', path: '/photos/big.bin', query: { uploadId: 'no-such-upload' } },
  GetObjectAcl: { method: 'GET', path: '/photos/cat.jpg', query: { acl: '' } },
  PutObjectAcl: { method: 'PUT', path: '/photos/cat.jpg', query: { acl: '' }, headers: { 'x-amz-acl': 'private' } },
  GetObjectTagging: { method: 'GET', path: '/photos/cat.jpg', query: { tagging: '' } },
  PutObjectTagging: { method: 'PUT', path: '/photos/cat.jpg', query: { tagging: '' }, body: `${xml}<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tagging>` },
  DeleteObjectTagging: { method: 'DELETE', path: '/photos/cat.jpg', query: { tagging: '' } },
  GetObjectAttributes: { method: 'GET', path: '/photos/cat.jpg', query: { attributes: '' }, headers: { 'x-amz-object-attributes': 'ETag' } },
  GetObjectRetention: { method: 'GET', path: '/photos/cat.jpg', query: { retention: '' } },
  PutObjectRetention: { method: 'PUT', path: '/photos/cat.jpg', query: { retention: '' }, body: `${xml}<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>2030-01-01T00:00:00Z</RetainUntilDate></Retention>` },
  GetObjectLegalHold: { method: 'GET', path: '/photos/cat.jpg', query: { 'legal-hold': '' } },
  PutObjectLegalHold: { method: 'PUT', path: '/photos/cat.jpg', query: { 'legal-hold': '' }, body: `${xml}<LegalHold><Status>OFF</Status></LegalHold>` },
  RestoreObject: { method: 'POST', path: '/photos/never-there.bin', query: { restore: '' }, body: `${xml}<RestoreRequest><Days>1</Days></RestoreRequest>` },
};

/** Sends an S3 request signed with these credentials. */
async function s3As(credentials: { accessKeyId: string; secretAccessKey: string }, example: S3Example): Promise<RawResponse> {
  const url = new URL(server.url);
  const body = example.body ?? '';
  const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials, sha256: Sha256, uriEscapePath: false });
  const headers = { host: url.host, 'x-amz-content-sha256': createHash('sha256').update(body).digest('hex'), ...(example.body !== undefined ? { 'content-md5': createHash('md5').update(body).digest('base64') } : {}), ...example.headers };
  const signed = await signer.sign({ method: example.method, protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: example.path, query: example.query ?? {}, headers, body });
  const query = example.query && Object.keys(example.query).length > 0 ? `?${queryString(example.query)}` : '';
  return send(server.url, example.method, `${example.path}${query}`, signed.headers as Record<string, string>, body);
}

/** The actions the router's declaration asks of an example (DeleteObjects: s3:DeleteObject for each key). */
function s3Needs(example: S3Example): string[] {
  const query = new URLSearchParams(example.query ?? {});
  const endpoint = routeS3Request({ method: example.method, rawPath: example.path, query, host: new URL(server.url).host, headers: example.headers ?? {} }, { virtualHostSuffixes: [] });
  const needed = permissionsOf(endpoint, query);
  return needed === 'per-key' ? ['s3:DeleteObject'] : [...new Set(needed.map((permission) => permission.action))];
}

async function s3State(): Promise<string> {
  const s3 = s3ClientFor(server.url);
  const extra = await Promise.all([
    s3.send(new GetBucketVersioningCommand({ Bucket: 'photos' })).then((answer) => answer.Status ?? 'unversioned'),
    s3.send(new GetBucketPolicyCommand({ Bucket: 'photos' })).then((answer) => answer.Policy, (error: { name?: string }) => error.name),
    s3.send(new GetObjectTaggingCommand({ Bucket: 'photos', Key: 'cat.jpg' })).then((answer) => JSON.stringify(answer.TagSet)),
  ]);
  return `${await snapshot()}\n${extra.join('\n')}`;
}

describe('S3 API: every endpoint refuses a caller missing any action its declaration asks, and lets one holding them all through', () => {
  beforeAll(ensureFixture);

  it('missing any one action: 403 AccessDenied (per key for DeleteObjects) and nothing changed', async () => {
    for (const [kind, example] of Object.entries(s3Examples)) {
      const needs = s3Needs(example);
      expect(needs.length, kind).toBeGreaterThan(0);
      for (const missing of needs) {
        const caller = await principalHolding(needs.filter((action) => action !== missing));
        const before = ['GET', 'HEAD'].includes(example.method) ? '' : await s3State();
        const answer = await s3As(caller, example);
        if (kind === 'DeleteObjects') expect(answer.body, kind).toContain('<Code>AccessDenied</Code>');
        else {
          expect(answer.status, `${kind} without ${missing}: ${answer.body}`).toBe(403);
          if (example.method !== 'HEAD') expect(answer.body).toContain('<Code>AccessDenied</Code>');
        }
        if (before !== '') expect(await s3State(), `${kind} without ${missing} changed state`).toBe(before);
      }
    }
  });

  it('holding exactly those actions: not refused', async () => {
    const entries = Object.entries(s3Examples);
    for (const [kind, example] of [...entries.filter(([, entry]) => ['GET', 'HEAD'].includes(entry.method)), ...entries.filter(([, entry]) => !['GET', 'HEAD'].includes(entry.method))]) {
      const answer = await s3As(await principalHolding(s3Needs(example)), example);
      expect(answer.status, `${kind}: ${answer.body}`).not.toBe(403);
      expect(answer.body, kind).not.toContain('<Code>AccessDenied</Code>');
    }
  });
});
