/**
 * JSON schemas of the Users page's console routes (routes-users.ts): fastify checks parameters
 * and bodies against them before a handler runs (a mismatch is InvalidArgument naming the field)
 * and writes answers by them. Plain JSON objects, so an OpenAPI document can show them as they are.
 */
const text = (maxLength: number) => ({ type: 'string', minLength: 1, maxLength }) as const;
const names = { type: 'array', items: text(128), maxItems: 64 } as const;

const user = {
  type: 'object',
  required: ['accessKey', 'enabled', 'policies', 'createdAt'],
  properties: {
    accessKey: { type: 'string' },
    enabled: { type: 'boolean' },
    policies: { type: 'array', items: { type: 'string' } },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

const userAnswer = { 200: { type: 'object', required: ['user'], properties: { user } } } as const;
const accessKeyParams = { type: 'object', required: ['accessKey'], properties: { accessKey: text(128) } } as const;
const nameParams = { type: 'object', required: ['name'], properties: { name: text(128) } } as const;
const noQuery = { type: 'object', additionalProperties: false, properties: {} } as const;

export const userSchemas = {
  listUsers: {
    querystring: noQuery,
    response: { 200: { type: 'object', required: ['users'], properties: { users: { type: 'array', items: user } } } },
  },
  addUser: {
    querystring: noQuery,
    body: {
      type: 'object',
      required: ['accessKey', 'secretKey'],
      properties: { accessKey: text(128), secretKey: text(128), policies: names },
    },
    response: userAnswer,
  },
  removeUser: {
    querystring: noQuery,
    params: accessKeyParams,
    response: { 200: { type: 'object', required: ['removed'], properties: { removed: { type: 'string' } } } },
  },
  setEnabled: {
    querystring: noQuery,
    params: accessKeyParams,
    body: { type: 'object', required: ['enabled'], properties: { enabled: { type: 'boolean' } } },
    response: userAnswer,
  },
  attachment: {
    querystring: noQuery,
    params: { type: 'object', required: ['accessKey', 'policy'], properties: { accessKey: text(128), policy: text(128) } },
    response: userAnswer,
  },
  listPolicies: {
    querystring: noQuery,
    response: {
      200: {
        type: 'object',
        required: ['policies'],
        properties: {
          policies: {
            type: 'array',
            items: {
              type: 'object',
              required: ['name', 'builtIn', 'document', 'users'],
              properties: {
                name: { type: 'string' },
                builtIn: { type: 'boolean' },
                /** The policy's IAM JSON document as stored. */
                document: { type: 'object', additionalProperties: true },
                users: { type: 'array', items: { type: 'string' } },
              },
            },
          },
        },
      },
    },
  },
  putPolicy: {
    querystring: noQuery,
    params: nameParams,
    /** `document` is the policy's JSON text, so the validator can name what is wrong with it, its syntax included. */
    body: { type: 'object', required: ['document'], properties: { document: { type: 'string' } } },
    response: { 200: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } },
  },
  removePolicy: {
    querystring: noQuery,
    params: nameParams,
    response: { 200: { type: 'object', required: ['removed'], properties: { removed: { type: 'string' } } } },
  },
};
