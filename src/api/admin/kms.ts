/**
 * The built-in KMS's keys: create one, list them, and a key's status (a seal and unseal round
 * trip). Without SVC_KMS_SECRET_KEY every route answers 501 KMSNotConfigured.
 */
import { adminAction as admin } from '../../iam/index.js';
import { SvcError } from '../../errors/index.js';
import type { Kms } from '../../ops/kms/kms.js';
import type { AdminContext, AdminRoute } from './context.js';
import { mutationQuery, statusQuery } from './query.js';
import * as schema from './route-schema.js';

const kmsPath = '/svc/admin/v4/kms';

const keyIdParameter = schema.text('the key name: 1 to 64 letters, digits and ._-');

export const kmsKeyStatusSchema = schema.object(
  {
    keyId: schema.text('the key name'),
    origin: schema.oneOfValues(['root', 'named'], 'root: the root key of SVC_KMS_SECRET_KEY; named: a key created through this API'),
    createdAt: schema.text('when the key was created (named keys)', { format: 'date-time' }),
    encryptionOk: schema.boolean('a probe was sealed with the key'),
    decryptionOk: schema.boolean('the probe was unsealed again'),
  },
  { optional: ['createdAt'], description: 'One KMS key.' },
);

const exampleKey = { keyId: 'backups', origin: 'named', createdAt: '2026-11-29T03:00:00.000Z', encryptionOk: true, decryptionOk: true };

function kmsOf(context: AdminContext): Kms {
  if (!context.kms) throw new SvcError('KMSNotConfigured');
  return context.kms;
}

export const kmsRoutes: AdminRoute[] = [
  {
    method: 'POST',
    path: `${kmsPath}/key/create`,
    schema: {
      summary: 'Create a KMS key',
      description: 'Creates a named key of the built-in KMS (32 random bytes, kept sealed by the root key in `.svc.sys/kms.bin`). 409 KMSKeyExists when the name is taken; 501 KMSNotConfigured without SVC_KMS_SECRET_KEY.',
      querystring: schema.mutationQuery({ 'key-id': keyIdParameter }, ['key-id']),
      response: kmsKeyStatusSchema,
      example: { query: 'key-id=backups', response: exampleKey },
    },
    access: { actions: [admin.kmsCreateKey] },
    handle: async (context, request) => {
      const query = mutationQuery(request.rawQuery, ['key-id']);
      return kmsOf(context).createKey(query.get('key-id') ?? '');
    },
  },
  {
    method: 'GET',
    path: `${kmsPath}/key/list`,
    schema: {
      summary: 'List KMS keys',
      description: 'The root key and every named key, each with a seal and unseal round trip. Unknown query parameters are ignored.',
      querystring: schema.statusQuery({}),
      response: schema.object({ keys: schema.list(kmsKeyStatusSchema, 'the keys, the root key first') }),
      example: { response: { keys: [{ keyId: 'svc-root', origin: 'root', encryptionOk: true, decryptionOk: true }, exampleKey] } },
    },
    access: { actions: [admin.kmsKeyStatus] },
    handle: async (context) => ({ keys: await kmsOf(context).listKeys() }),
  },
  {
    method: 'GET',
    path: `${kmsPath}/key/status`,
    schema: {
      summary: 'KMS key status',
      description: 'One key (the default key, the root key, without `key-id`). 400 KMS.NotFoundException for an unknown key.',
      querystring: schema.statusQuery({ 'key-id': keyIdParameter }),
      response: kmsKeyStatusSchema,
      example: { response: exampleKey },
    },
    access: { actions: [admin.kmsKeyStatus] },
    handle: async (context, request) => {
      const kms = kmsOf(context);
      return kms.keyStatus(statusQuery(request.rawQuery).get('key-id') ?? kms.defaultKeyId);
    },
  },
];
