/**
 * The authorization matrix, generated from the routes' own declarations: for every admin route
 * (src/api/admin/routes.ts and its parts), a user holding exactly the actions the route declares
 * passes, and a user missing any one of them is refused with 403 AccessDenied in the admin API's
 * JSON shape, with nothing it asked for done (the IAM state, the objects and the operations'
 * status read back unchanged). Each route is called with its schema's own example; the fixture
 * holds what the examples name (user alice with policies in group staff, whose policies hold a
 * Deny; policy photos-read held by alice; a service account of alice's; bucket photos).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, ListObjectVersionsCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { admin, type AdminAnswer } from './helpers/admin-client.js';
import { adminRoutes } from '../src/api/admin/routes.js';
import type { AdminRoute } from '../src/api/admin/context.js';

const iam = '/svc/admin/v4/iam';
let server: SvcProcess;
let root: string;
let principals = 0;

/** Actions an example does not need although its route declares them (the conditional rule does not ask them of this call). */
const notNeededByExample: Record<string, string[]> = {
  // The example names no versionId: reading the latest version is s3:GetObject.
  'GET /svc/admin/v4/object/placement': ['s3:GetObjectVersion'],
};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-authz-matrix-'));
  server = await startSvc({ args: [`${root}/p1/d{1...4}`, `${root}/p2/d{1...4}`], env: { SVC_DRIVE_BACKEND: 'memfs', SVC_FAULT_INJECTION: 'on' } });
  const s3 = s3ClientFor(server.url);
  await s3.send(new CreateBucketCommand({ Bucket: 'photos' }));
  for (const key of ['cat.jpg', '2026/dog.jpg']) await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: key, Body: `bytes of ${key}` }));
  const noTrash = { Version: '2012-10-17', Statement: [{ Effect: 'Deny', Action: ['s3:DeleteObject'], Resource: ['arn:aws:s3:::photos/*'] }] };
  const photosRead = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: ['arn:aws:s3:::photos/*'] }] };
  await rootCall('POST', `${iam}/user/add`, '', { accessKey: 'alice', secretKey: 'alice-secret-1', policies: ['readonly'] });
  await rootCall('POST', `${iam}/policy/create`, 'name=photos-read', photosRead);
  await rootCall('POST', `${iam}/policy/create`, 'name=no-trash', noTrash);
  await rootCall('POST', `${iam}/policy/attach`, 'accessKey=alice&policy=photos-read');
  await rootCall('POST', `${iam}/group/add`, 'group=staff', { members: ['alice'] });
  await rootCall('POST', `${iam}/policy/attach`, 'group=staff&policy=no-trash');
  await rootCall('POST', `${iam}/svcacct/add`, '', { parent: 'alice', accessKey: 'Q3AM3UQ867SPQQA43P2F', name: 'backup' });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

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
  const stable = (body: Record<string, any>) => JSON.stringify(body, (key, value) => (['generatedAt', 'nextCycleAt', 'elapsed'].includes(key) ? undefined : value));
  return [...reads, accounts].map((answer) => stable(answer.body)).join('\n') + JSON.stringify((objects.Versions ?? []).map((version) => [version.Key, version.VersionId, version.ETag]));
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
