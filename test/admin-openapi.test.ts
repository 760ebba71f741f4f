/**
 * Route schemas and the OpenAPI document. In-process: every admin and console API route fastify
 * registers carries a schema; the document validates as OpenAPI 3 and lists exactly the admin
 * routes registered (read from fastify's onRoute hook, not a hand list); every declared example
 * fits its schema; docs/admin-reference.md is what `npm run docs:admin` writes. Against a real
 * server: the served document is the same, refusals have the project's named errors, and the
 * answers of the routes (every GET, a representative set of POSTs) fit their declared schemas.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type RouteOptions } from 'fastify';
import { readFile } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { adminPlugin, adminPrefix } from '../src/api/admin/admin-plugin.js';
import { adminRoutes } from '../src/api/admin/routes.js';
import { checkAnswers, fastifySchema, integer, noQuery, object, schemaValidatorOptions, type JsonSchema, type RouteSchema } from '../src/api/admin/route-schema.js';
import { consolePlugin } from '../src/console/console-plugin.js';
import type { ConsoleContext } from '../src/console/context.js';
import type { ConsoleAssets } from '../src/console/assets.js';
import { adminOpenApiDocument, referencePath, renderAdminReference } from '../scripts/admin-reference.js';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';

type Json = Record<string, any>;

const ajv = new Ajv2020({ strict: false, allErrors: true });

function fits(schema: JsonSchema, value: unknown): string | undefined {
  const validate = ajv.compile(schema);
  return validate(value) ? undefined : ajv.errorsText(validate.errors);
}

/** Every route fastify registers when the admin and console plugins are registered as main.ts does, and the console's document. */
async function registeredRoutes(): Promise<{ routes: RouteOptions[]; consoleDocument: Json }> {
  const routes: RouteOptions[] = [];
  const app = Fastify({ logger: false, exposeHeadRoutes: false, ajv: { customOptions: { ...schemaValidatorOptions } } });
  app.addHook('onRoute', (route) => void routes.push(route));
  await app.register(adminPlugin, { context: () => ({}) as never, credentials: { secretFor: () => undefined }, access: { rootAccessKey: 'root', principalOf: () => undefined }, objects: {} as never });
  const context = { nowMs: () => 0, logger: { info() {}, warn() {} } } as unknown as ConsoleContext;
  await app.register(consolePlugin, { context, assets: {} as ConsoleAssets, trustedProxies: [], bodyIdleTimeoutMs: 0 });
  await app.ready();
  const consoleDocument = (await app.inject({ method: 'GET', url: '/svc/console/api/openapi.json' })).json() as Json;
  await app.close();
  return { routes, consoleDocument };
}

/** `METHOD /path` of every operation of a document. */
function operationsOf(document: Json): string[] {
  return Object.entries(document.paths as Json).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`)).sort();
}

/** `METHOD /path` of every registered route under a prefix, as OpenAPI writes its path. */
function routesUnder(routes: RouteOptions[], prefix: string): string[] {
  return routes
    .filter((route) => route.url.startsWith(prefix) && route.url !== `${prefix}*`)
    .flatMap((route) => [route.method].flat().map((method) => `${method} ${openApiPathOf(route.url)}`))
    .sort();
}

/** An admin route as OpenAPI writes its path: `:name` is `{name}`, a trailing `*` is `{prefix}`. */
function openApiPathOf(url: string): string {
  return url.replace(/:([^/]+)/g, '{$1}').replace(/\*$/, '{prefix}');
}

describe('route schemas and the OpenAPI document (in-process)', () => {
  let routes: RouteOptions[];
  let consoleDocument: Json;
  let document: Json;
  beforeAll(async () => {
    ({ routes, consoleDocument } = await registeredRoutes());
    document = await adminOpenApiDocument();
  });

  it('every admin and console API route declares its query and its answer', () => {
    const api = routes.filter((route) => (route.url.startsWith(adminPrefix) && route.url !== `${adminPrefix}*`) || route.url.startsWith('/svc/console/api/'));
    expect(api.length).toBeGreaterThan(50);
    const missing = api.filter((route) => !route.schema?.querystring || !(route.schema.response as Json | undefined)?.['200']).map((route) => `${String(route.method)} ${route.url}`);
    expect(missing).toEqual([]);
  });

  it('validates as OpenAPI 3 and lists exactly the admin routes fastify registers', async () => {
    const result = await new Validator().validate(document as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toMatch(/^3\./);
    const registered = routesUnder(routes, adminPrefix);
    expect(operationsOf(document)).toEqual(registered);
    expect(registered.length).toBe(adminRoutes.length + 1); // the table and the document itself
  });

  it("the console API's document validates as OpenAPI 3 and lists exactly its registered routes", async () => {
    const result = await new Validator().validate(consoleDocument as never);
    expect(result.errors ?? []).toEqual([]);
    expect(operationsOf(consoleDocument)).toEqual(routesUnder(routes, '/svc/console/api/'));
  });

  it('every declared example fits its schema', () => {
    const consoleSchemas = routes.filter((route) => route.url.startsWith('/svc/console/api/')).map((route) => [`${String(route.method)} ${route.url}`, route.schema as Json] as const);
    const adminSchemas = adminRoutes.map((route) => [`${route.method} ${route.path}`, fastifySchema(route.schema, 'admin') as Json] as const);
    const problems: string[] = [];
    for (const [name, schema] of [...adminSchemas, ...consoleSchemas]) {
      const response = schema.response['200'];
      const body = schema.body as Json | undefined;
      const queryExample = Object.fromEntries(Object.entries((schema.querystring.properties ?? {}) as Json).filter(([, property]) => property.examples).map(([key, property]) => [key, property.examples[0]]));
      for (const [part, partSchema, value] of [['answer', response, response.examples?.[0]], ['body', body, body?.examples?.[0]], ['query', schema.querystring, queryExample]] as const) {
        if (!partSchema) continue;
        const problem = fits(partSchema, value);
        if (problem) problems.push(`${name} ${part}: ${problem}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('docs/admin-reference.md is what npm run docs:admin generates from the document', async () => {
    expect(await readFile(referencePath, 'utf8')).toBe(renderAdminReference(document));
  });

  it('an answer its schema does not describe is an InternalError, never a silently narrowed answer', async () => {
    const app = Fastify({ logger: false, ajv: { customOptions: { ...schemaValidatorOptions } } });
    checkAnswers(app);
    const declared: RouteSchema = { summary: 's', description: 'd', querystring: noQuery(), response: object({ id: integer('id') }), example: { response: { id: 1 } } };
    app.get('/fits', { schema: fastifySchema(declared, 't') }, async () => ({ id: 1 }));
    app.get('/wider', { schema: fastifySchema(declared, 't') }, async () => ({ id: 1, secret: 'x' }));
    app.setErrorHandler(async (error, _request, reply) => reply.code(500).header('content-type', 'application/json').send(JSON.stringify({ code: (error as { code?: string }).code, message: (error as Error).message })));
    expect((await app.inject({ url: '/fits' })).json()).toEqual({ id: 1 });
    const wider = await app.inject({ url: '/wider' });
    expect(wider.statusCode).toBe(500);
    expect(wider.json().code).toBe('InternalError');
    expect(wider.json().message).toContain('secret');
    await app.close();
  });
});

describe('answers of a running server fit the OpenAPI document', () => {
  let server: SvcProcess;
  let root: string;
  let document: Json;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-openapi-'));
    server = await startSvc({ args: [`${root}/p1/d{1...4}`, `${root}/p2/d{1...4}`], env: { SVC_DRIVE_BACKEND: 'memfs', SVC_FAULT_INJECTION: 'on', SVC_KMS_SECRET_KEY: `svc-root:${Buffer.alloc(32, 1).toString('base64')}` } });
    const s3 = s3ClientFor(server.url);
    await s3.send(new CreateBucketCommand({ Bucket: 'photos' }));
    for (const key of ['cat.jpg', '2026/dog.jpg']) await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: key, Body: `bytes of ${key}` }));
    // What the IAM routes' examples name: user alice in group staff, policy photos-read, a service account of alice's.
    const iam = '/svc/admin/v4/iam';
    await admin(server.url, 'POST', `${iam}/user/add`, '', { body: JSON.stringify({ accessKey: 'alice', secretKey: 'alice-secret-1', policies: ['readonly'] }) });
    await admin(server.url, 'POST', `${iam}/policy/create`, 'name=photos-read', { body: JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: ['arn:aws:s3:::photos/*'] }] }) });
    await admin(server.url, 'POST', `${iam}/group/add`, 'group=staff', { body: JSON.stringify({ members: ['alice'] }) });
    await admin(server.url, 'POST', `${iam}/svcacct/add`, '', { body: JSON.stringify({ parent: 'alice', accessKey: 'Q3AM3UQ867SPQQA43P2F', name: 'backup' }) });
    // The tier routes' examples name tier WARM: here the deployment is its own tier (bucket photos).
    const tier = await admin(server.url, 'POST', '/svc/admin/v4/tier/add', '', { body: JSON.stringify({ name: 'warm', endpoint: server.url, bucket: 'photos', prefix: 'svc/', accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey }) });
    expect(tier.status, JSON.stringify(tier.body)).toBe(200);
    document = (await (await fetch(`${server.url}${adminPrefix}openapi.json`)).json()) as Json;
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  /** Calls a route of the document (`path` fills its path parameters) and checks the answer against the document's 200 schema. */
  async function call(method: 'GET' | 'POST', documentPath: string, query = '', body?: unknown, path = documentPath): Promise<Json> {
    const answer = await admin(server.url, method, path, query, body === undefined ? {} : { body: JSON.stringify(body) });
    expect(answer.status, `${method} ${path}?${query}: ${JSON.stringify(answer.body)}`).toBe(200);
    const schema = document.paths[documentPath]?.[method.toLowerCase()]?.responses?.['200']?.content?.['application/json']?.schema as JsonSchema | undefined;
    expect(schema, `${method} ${documentPath} in the document`).toBeDefined();
    expect(fits(schema!, answer.body), `${method} ${path}`).toBeUndefined();
    return answer.body;
  }

  /** A call the state may refuse (a small pool's decommission or a rebalance may be over already): 200 fits the schema, or that refusal. */
  async function maybe(method: 'POST', path: string, query: string, refusal: string): Promise<boolean> {
    const answer = await admin(server.url, method, path, query);
    if (answer.status !== 200) {
      expect(answer.body.Code).toBe(refusal);
      return false;
    }
    expect(fits(document.paths[path].post.responses['200'].content['application/json'].schema, answer.body)).toBeUndefined();
    return true;
  }

  it('serves the same document, without a signature', async () => {
    expect(document).toEqual(await adminOpenApiDocument());
  });

  it('refuses what the schemas refuse with named admin errors, not fastify bodies', async () => {
    const unknown = await admin(server.url, 'POST', '/svc/admin/v3/pools/cancel', 'pool=1&by-id=true&color=red');
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ Code: 'InvalidQueryParameter', Details: { parameter: 'color' }, Resource: '/svc/admin/v3/pools/cancel' });
    const twice = await admin(server.url, 'POST', '/svc/admin/v3/pools/clear', 'pool=0&pool=1');
    expect(twice.body).toMatchObject({ Code: 'InvalidQueryParameter', Details: { parameter: 'pool' } });
    const wrongType = await admin(server.url, 'POST', '/svc/admin/v4/simulate/failure', '', { body: JSON.stringify({ drives: 'all' }) });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body).toMatchObject({ Code: 'InvalidArgument', Details: { field: 'drives' } });
    const badPolicy = await admin(server.url, 'POST', '/svc/admin/v4/iam/policy/create', 'name=x', { body: '[1' });
    expect(badPolicy.body.Code).toBe('MalformedPolicy');
    const unsigned = await admin(server.url, 'GET', '/svc/admin/v3/pools/list', '', { unsigned: true });
    expect(unsigned.body.Code).toBe('AccessDenied');
  });

  it('every GET route of the document, called with its example query, answers what its schema declares', async () => {
    // A live listener's answer never ends: its lines are checked by test/event-watch.test.ts.
    const gets = Object.entries(document.paths as Json).filter(([path, methods]) => methods.get && path !== '/svc/admin/v4/event/listen');
    expect(gets.length).toBeGreaterThan(10);
    for (const [path, methods] of gets) {
      const parameters = (methods.get.parameters ?? []) as Json[];
      const query = new URLSearchParams(parameters.filter((parameter) => parameter.in === 'query' && parameter.example !== undefined).map((parameter): [string, string] => [parameter.name, String(parameter.example)]));
      await call('GET', path, query.toString());
    }
  });

  it('POST routes answer what their schemas declare: users, heal, what-if, faults, rebalance, decommission', async () => {
    await call('POST', '/svc/admin/v4/iam/user/add', '', { accessKey: 'alice', secretKey: 'alice-secret-1', policies: ['readonly'] });
    await call('POST', '/svc/admin/v4/iam/policy/create', 'name=photos-read', { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: ['arn:aws:s3:::photos/*'] }] });
    await call('POST', '/svc/admin/v4/iam/policy/attach', 'accessKey=alice&policy=photos-read');
    await call('POST', '/svc/admin/v4/iam/policy/attach', 'group=staff&policy=photos-read');
    await call('POST', '/svc/admin/v4/iam/group/disable', 'group=staff');
    await call('POST', '/svc/admin/v4/iam/group/enable', 'group=staff');
    await call('POST', '/svc/admin/v4/iam/group/remove', 'group=staff', { members: ['alice'] });
    await call('POST', '/svc/admin/v4/iam/group/remove', 'group=staff');
    const account = await call('POST', '/svc/admin/v4/iam/svcacct/add', '', { parent: 'alice', policy: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: ['arn:aws:s3:::photos/*'] }] }, expiry: new Date(Date.now() + 3_600_000).toISOString() });
    expect(account.serviceAccount.secretKey.length).toBeGreaterThanOrEqual(8);
    await call('POST', '/svc/admin/v4/iam/svcacct/update', `accessKey=${account.serviceAccount.accessKey}`, { enabled: false, policy: null, expiry: null });
    await call('POST', '/svc/admin/v4/iam/svcacct/remove', `accessKey=${account.serviceAccount.accessKey}`);
    await call('POST', '/svc/admin/v4/iam/user/disable', 'accessKey=alice');
    await call('POST', '/svc/admin/v4/iam/user/remove', 'accessKey=alice');
    const rootHeal = await call('POST', '/svc/admin/v3/heal/', '', { recursive: true, dryRun: true });
    await call('POST', '/svc/admin/v3/heal', `clientToken=${rootHeal.clientToken}`);
    await call('POST', '/svc/admin/v3/heal/{bucket}', '', {}, '/svc/admin/v3/heal/photos');
    await call('POST', '/svc/admin/v3/heal/{bucket}/{prefix}', '', { recursive: true, scanMode: 'deep' }, '/svc/admin/v3/heal/photos/2026/');
    await call('POST', '/svc/admin/v3/background-heal/status');
    await call('POST', '/svc/admin/v4/simulate/failure', '', { drives: [`${root}/p1/d1`], scope: { bucket: 'photos' } });
    await call('POST', '/svc/admin/v4/faults', `drive=${root}/p2/d4`, {});
    await call('POST', '/svc/admin/v4/kms/key/create', 'key-id=openapi');
    await call('POST', '/svc/admin/v4/kms/key/rotate', 'key-id=openapi');
    await call('POST', '/svc/admin/v4/kms/key/disable', 'key-id=openapi');
    await call('POST', '/svc/admin/v4/kms/key/enable', 'key-id=openapi');
    await call('POST', '/svc/admin/v4/kms/key/delete', 'key-id=openapi&force=true');
    await call('POST', '/svc/admin/v3/rebalance/start');
    await call('GET', '/svc/admin/v3/rebalance/status');
    await maybe('POST', '/svc/admin/v3/rebalance/stop', '', 'NoRebalanceRunning');
    await call('POST', '/svc/admin/v3/pools/decommission', 'pool=1&by-id=true');
    await call('GET', '/svc/admin/v3/pools/list');
    if (await maybe('POST', '/svc/admin/v3/pools/cancel', 'pool=1&by-id=true', 'NoActiveDecommission')) await call('POST', '/svc/admin/v3/pools/clear', 'pool=1&by-id=true');
    await call('GET', '/svc/admin/v3/decommission/status', 'pool=1&by-id=true');
    await call('GET', '/svc/admin/v4/cluster/snapshot');
  }, 60_000);
});
