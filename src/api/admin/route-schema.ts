/**
 * Route schemas: every admin and console JSON route declares its query, body and answer as JSON
 * Schema, with one worked example, in a `RouteSchema`. Fastify validates requests against them
 * (a refusal becomes the project's named error, never fastify's default body), serialises answers
 * with them, and @fastify/swagger turns them into the OpenAPI document the admin reference is
 * generated from (`npm run docs:admin`).
 *
 * Validation never strips or coerces: the validator runs with `schemaValidatorOptions`, so an
 * unknown field or parameter where the schema closes the object is refused, not dropped, and a
 * query value stays the string that was sent.
 */
import type { FastifyError, FastifyInstance, FastifySchema } from 'fastify';
import { SvcError, assert, type ErrorCode } from '../../errors/index.js';

export type JsonSchema = Record<string, unknown>;

export interface RouteExample {
  /** The query string of the example request, without the `?`. */
  query?: string;
  /** The example's path parameters, for a path with `:name` or `*`. */
  params?: Record<string, string>;
  body?: unknown;
  /** The answer to the example request. */
  response: unknown;
}

export interface RouteSchema {
  /** One line: what the route does. */
  summary: string;
  /** The rules a caller needs: what it changes, when it answers, what it refuses. */
  description: string;
  /** `noQuery()`, `mutationQuery({...})` or `statusQuery({...})`. */
  querystring: JsonSchema;
  /** Path parameters, for paths with `:name` or `*`. */
  params?: JsonSchema;
  /** The JSON body; a route without one takes no body. */
  body?: JsonSchema;
  /** The 200 answer. */
  response: JsonSchema;
  example: RouteExample;
  /** The error for a body that is not JSON or does not fit `body` (default InvalidArgument). */
  bodyErrorCode?: ErrorCode;
}

/** The validator's options on every listener (fastify's `ajv.customOptions`). */
export const schemaValidatorOptions = { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: false, verbose: true } as const;

// ---- schema builders: objects are closed and every property required unless named optional ----

export function object(properties: Record<string, JsonSchema>, options: { optional?: string[]; description?: string } = {}): JsonSchema {
  const optional = new Set(options.optional ?? []);
  return {
    type: 'object',
    ...(options.description ? { description: options.description } : {}),
    properties,
    required: Object.keys(properties).filter((name) => !optional.has(name)),
    additionalProperties: false,
  };
}

/** An object whose members are not fixed (a fault plan, a policy document). */
export function openObject(description: string): JsonSchema {
  return { type: 'object', description, additionalProperties: true };
}

export const text = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'string', description, ...extra });
export const integer = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'integer', description, ...extra });
export const number = (description: string): JsonSchema => ({ type: 'number', description });
export const boolean = (description: string): JsonSchema => ({ type: 'boolean', description });
export const list = (items: JsonSchema, description: string): JsonSchema => ({ type: 'array', description, items });
export const oneOfValues = (values: readonly string[], description: string): JsonSchema => ({ type: 'string', enum: [...values], description });
export const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });

// ---- queries (SPEC "Endpoints": status queries ignore unknown parameters, mutations refuse them) ----

/** No parameter at all (the handler refuses a bare `?` too where the rules say so). */
export function noQuery(): JsonSchema {
  return { type: 'object', properties: {}, additionalProperties: false };
}

/** A mutation's query: only these parameters, each at most once. */
export function mutationQuery(properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema {
  return { type: 'object', properties, required, additionalProperties: false };
}

/** A status query: these parameters, each at most once; unknown ones are ignored. */
export function statusQuery(properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema {
  return { type: 'object', properties, required, additionalProperties: true };
}

export const errorBodySchema = object(
  {
    Code: text('the error code (docs/errors.md)'),
    Message: text('what went wrong, in words'),
    Resource: text('the request path'),
    RequestId: text('the request id (also the x-amz-request-id header)'),
    Details: openObject('the values the error is about (a parameter, a field, a pool)'),
  },
  { optional: ['Details'], description: 'An error: the HTTP status is the code\'s (docs/errors.md).' },
);

/** The schema fastify and @fastify/swagger are given: examples attached where OpenAPI shows them. */
export function fastifySchema(route: RouteSchema, tag: string): FastifySchema {
  const example = route.example;
  const queryExample = new URLSearchParams(example.query ?? '');
  const querystring = withExamples(route.querystring, Object.fromEntries(queryExample));
  const params = route.params ? withExamples(route.params, example.params ?? {}) : undefined;
  return {
    summary: route.summary,
    description: route.description,
    tags: [tag],
    querystring,
    ...(params ? { params } : {}),
    ...(route.body ? { body: { ...route.body, examples: [example.body ?? {}] } } : {}),
    response: { 200: { ...route.response, examples: [example.response] }, default: errorBodySchema },
  };
}

/** Each property that has an example value gets it as `examples` (OpenAPI shows it with the parameter). */
function withExamples(objectSchema: JsonSchema, values: Record<string, string>): JsonSchema {
  const properties = (objectSchema.properties ?? {}) as Record<string, JsonSchema>;
  for (const name of Object.keys(values)) assert(name in properties, `the example names '${name}', which the schema does not declare`);
  return { ...objectSchema, properties: Object.fromEntries(Object.entries(properties).map(([name, schema]) => [name, name in values ? { ...schema, examples: [values[name]] } : schema])) };
}

/** For @fastify/swagger: a trailing wildcard becomes the path parameter `{prefix}`, as OpenAPI paths have no wildcards. */
export function wildcardAsPrefix({ schema, url }: { schema: FastifySchema; url: string }): { schema: FastifySchema; url: string } {
  const routeSchema = schema as FastifySchema & { params?: { properties?: Record<string, unknown>; required?: string[] } };
  if (!url.endsWith('*') || !routeSchema?.params?.properties) return { schema, url };
  const { '*': rest, ...named } = routeSchema.params.properties;
  const params = { ...routeSchema.params, properties: { ...named, prefix: rest }, required: [...(routeSchema.params.required ?? []).filter((name) => name !== '*'), 'prefix'] };
  return { schema: { ...routeSchema, params }, url: `${url.slice(0, -1)}{prefix}` };
}

// ---- refusals and the answer check ----

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  data?: unknown;
  parentSchema?: JsonSchema;
}

/** A fastify validation failure as the project's named error; undefined for any other error. */
export function schemaRefusal(error: unknown, bodyErrorCode: ErrorCode = 'InvalidArgument'): SvcError | undefined {
  const { validation, validationContext } = error as FastifyError & { validation?: ValidationIssue[] };
  const issue = validation?.[0];
  if (!issue) return undefined;
  const inQuery = validationContext === 'querystring';
  const path = issue.instancePath.split('/').filter((part) => part !== '').join('.');
  const name = String(issue.params.additionalProperty ?? issue.params.missingProperty ?? path);
  const message = inQuery ? queryMessage(issue, name) : fieldMessage(issue, name, path);
  if (inQuery) return new SvcError('InvalidQueryParameter', message, { parameter: name });
  return new SvcError(validationContext === 'body' ? bodyErrorCode : 'InvalidArgument', message, { field: name === '' ? 'body' : name });
}

function allowedOf(issue: ValidationIssue): string {
  return Object.keys((issue.parentSchema?.properties ?? {}) as object).join(', ') || 'none';
}

function queryMessage(issue: ValidationIssue, name: string): string {
  if (issue.keyword === 'additionalProperties') return `unknown query parameter '${name}' (allowed: ${allowedOf(issue)})`;
  if (issue.keyword === 'required') return `the ${name} parameter is required`;
  if (issue.keyword === 'type' && Array.isArray(issue.data)) return `query parameter '${name}' given more than once`;
  if (issue.keyword === 'enum') return `${name} must be ${(issue.params.allowedValues as string[]).join(' or ')}, not '${String(issue.data)}'`;
  return `query parameter '${name}' ${issue.message ?? 'is not valid'}`;
}

function fieldMessage(issue: ValidationIssue, name: string, path: string): string {
  const where = path === '' ? 'the body' : path;
  if (issue.keyword === 'additionalProperties') return `unknown field '${name}' in ${where} (allowed: ${allowedOf(issue)})`;
  if (issue.keyword === 'required') return `${path === '' ? '' : `${path}.`}${name} is required`;
  if (issue.keyword === 'enum') return `${where} must be ${(issue.params.allowedValues as string[]).join(' or ')}`;
  return `${where} ${issue.message ?? 'is not valid'}`;
}

/**
 * Checks every 200 answer against the route's declared schema before it is serialised: a handler
 * that answers something its schema does not describe is a bug, reported as InternalError (and
 * logged), rather than an answer whose extra fields the serialiser would silently drop.
 */
export function checkAnswers(app: FastifyInstance): void {
  app.addHook('preSerialization', async (request, reply, payload) => {
    if (reply.statusCode !== 200) return payload;
    const schema = ((request.routeOptions.schema?.response ?? {}) as Record<string, JsonSchema>)['200'];
    if (!schema) return payload;
    const validate = request.compileValidationSchema(schema);
    if (validate(payload)) return payload;
    const issue = (validate.errors ?? [])[0] as ValidationIssue | undefined;
    throw new SvcError('InternalError', `the answer does not match its declared schema: ${issue ? `${issue.instancePath || '/'} ${issue.message ?? ''} ${JSON.stringify(issue.params)}` : 'unknown'}`, {}, { cause: validate.errors });
  });
}
