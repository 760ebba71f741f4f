/**
 * The built-in KMS's keys: create one, list them (what a key picker needs: names, enabled or
 * not), a key's status (a seal and unseal round trip), rotate, disable, enable and delete one, and
 * the status of the background re-wrap a rotation starts. Without a KMS (SVC_KMS_SECRET_KEY or
 * SVC_KMS_KEY_DIR) every route answers 501 KMSNotConfigured.
 */
import { adminAction as admin } from '../../iam/index.js';
import { SvcError } from '../../errors/index.js';
import type { Kms } from '../../ops/kms/kms.js';
import type { AdminContext, AdminRoute, KmsKeyControl } from './context.js';
import { mutationQuery, statusQuery } from './query.js';
import * as schema from './route-schema.js';

const kmsPath = '/svc/admin/v4/kms';

const keyIdParameter = schema.text('the key name: 1 to 64 letters, digits and ._-');

export const kmsKeyStatusSchema = schema.object(
  {
    keyId: schema.text('the key name'),
    origin: schema.oneOfValues(['root', 'named'], 'root: a root key (SVC_KMS_SECRET_KEY or a file of SVC_KMS_KEY_DIR); named: a key created through this API'),
    createdAt: schema.text('when the key was created (named keys)', { format: 'date-time' }),
    enabled: schema.boolean('requests may use the key (a disabled key neither seals nor unseals: KMS.DisabledException)'),
    version: schema.integer('the key version that seals new data keys: 1, plus one per rotation', { minimum: 1 }),
    rotatedAt: schema.text('when the newest version was made (rotated keys)', { format: 'date-time' }),
    encryptionOk: schema.boolean('a probe was sealed with the key'),
    decryptionOk: schema.boolean('the probe was unsealed again'),
  },
  { optional: ['createdAt', 'rotatedAt'], description: 'One KMS key.' },
);

const exampleKey = { keyId: 'backups', origin: 'named', createdAt: '2026-11-29T03:00:00.000Z', enabled: true, version: 1, encryptionOk: true, decryptionOk: true };

const count = (description: string) => schema.integer(description, { minimum: 0 });

export const kmsRewrapStatusSchema = schema.object(
  {
    id: schema.nullable(schema.text('the run\'s id')),
    state: schema.oneOfValues(['none', 'running', 'finished', 'failed'], 'none: no rotation has run; running: walking the objects (resumed after a restart); finished; failed: the walk stopped (lastError)'),
    keyIds: schema.list(schema.text('a key name'), 'the keys rotated for this run'),
    startedAt: schema.text('when the run started', { format: 'date-time' }),
    finishedAt: schema.text('when it finished or failed', { format: 'date-time' }),
    versionsScanned: count('object versions looked at'),
    rewrapped: count('data keys sealed again under their key\'s newest version'),
    failed: count('versions whose data key could not be sealed again (see lastError and the log)'),
    bucketsDone: count('buckets walked through in the current pass'),
    bucketsTotal: count('buckets there were when the current pass began'),
    currentBucket: schema.text('the bucket the walk is in'),
    resumed: count('times a restart resumed the run where it was'),
    lastError: schema.text('the last failure: bucket/key (version): error'),
  },
  { optional: ['startedAt', 'finishedAt', 'currentBucket', 'lastError'], description: 'The background re-wrap after a key rotation, as the leader runs it.' },
);

const exampleRewrap = { id: '5b0e3c3e-8d0f-4d2a-9f57-1c1f0c4b2a77', state: 'running', keyIds: ['backups'], startedAt: '2026-11-29T03:10:00.000Z', versionsScanned: 1200, rewrapped: 310, failed: 0, bucketsDone: 1, bucketsTotal: 3, currentBucket: 'photos', resumed: 0 };

function keysOf(context: AdminContext): KmsKeyControl {
  if (!context.kmsKeys) throw new SvcError('KMSNotConfigured');
  return context.kmsKeys;
}

/** Disable and enable: the same route shape, each with its own action. */
function enableRoute(enabled: boolean): AdminRoute {
  const verb = enabled ? 'enable' : 'disable';
  return {
    method: 'POST',
    path: `${kmsPath}/key/${verb}`,
    schema: {
      summary: enabled ? 'Enable a KMS key' : 'Disable a KMS key',
      description: enabled
        ? 'Lets requests use a disabled key again: objects under it read again. Announced to every node. 400 KMS.NotFoundException for an unknown key.'
        : 'Stops requests using the key: a PUT, copy or multipart upload that asks for it and a GET of an object under it answer 400 KMS.DisabledException; nothing stored changes. The default key cannot be disabled (400 InvalidArgument). Announced to every node. 400 KMS.NotFoundException for an unknown key.',
      querystring: schema.mutationQuery({ 'key-id': keyIdParameter }, ['key-id']),
      response: kmsKeyStatusSchema,
      example: { query: 'key-id=backups', response: { ...exampleKey, enabled } },
    },
    access: { actions: [enabled ? admin.kmsEnableKey : admin.kmsDisableKey] },
    handle: async (context, request) => {
      kmsOf(context);
      const query = mutationQuery(request.rawQuery, ['key-id']);
      return keysOf(context).setEnabled(query.get('key-id') ?? '', enabled);
    },
  };
}

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
      description: 'The root keys and every named key, each with whether it is enabled, its version and a seal and unseal round trip: what a key picker needs (offer the enabled ones). Unknown query parameters are ignored.',
      querystring: schema.statusQuery({}),
      response: schema.object({ keys: schema.list(kmsKeyStatusSchema, 'the keys, the root key first') }),
      example: { response: { keys: [{ keyId: 'svc-root', origin: 'root', enabled: true, version: 1, encryptionOk: true, decryptionOk: true }, exampleKey] } },
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
  {
    method: 'POST',
    path: `${kmsPath}/key/rotate`,
    schema: {
      summary: 'Rotate a KMS key',
      description: 'Makes a new version of the key, which seals every new data key from then on; the older versions stay to unseal. Then the leader re-wraps in the background every data key an older version sealed (only xl.meta changes, never the data), resumed after a restart: follow it with the re-wrap status route. 400 KMS.NotFoundException for an unknown key, 400 KMS.DisabledException for a disabled one.',
      querystring: schema.mutationQuery({ 'key-id': keyIdParameter }, ['key-id']),
      response: schema.object({ key: kmsKeyStatusSchema, rewrap: kmsRewrapStatusSchema }),
      example: { query: 'key-id=backups', response: { key: { ...exampleKey, version: 2, rotatedAt: '2026-11-29T03:10:00.000Z' }, rewrap: { id: exampleRewrap.id, state: 'running', keyIds: ['backups'], startedAt: '2026-11-29T03:10:00.000Z', versionsScanned: 0, rewrapped: 0, failed: 0, bucketsDone: 0, bucketsTotal: 3, resumed: 0 } } },
    },
    access: { actions: [admin.kmsRotateKey] },
    handle: async (context, request) => {
      kmsOf(context);
      const query = mutationQuery(request.rawQuery, ['key-id']);
      return keysOf(context).rotate(query.get('key-id') ?? '');
    },
  },
  enableRoute(false),
  enableRoute(true),
  {
    method: 'GET',
    path: `${kmsPath}/rewrap/status`,
    schema: {
      summary: 'KMS re-wrap status',
      description: 'The background re-wrap after a key rotation, from the leader whichever node is asked: its state, objects scanned, re-wrapped and failed, and when it started and finished. `state: none` before the first rotation. Unknown query parameters are ignored.',
      querystring: schema.statusQuery({}),
      response: kmsRewrapStatusSchema,
      example: { response: exampleRewrap },
    },
    access: { actions: [admin.kmsKeyStatus] },
    handle: async (context) => {
      kmsOf(context);
      return keysOf(context).rewrapStatus();
    },
  },
  {
    method: 'POST',
    path: `${kmsPath}/key/delete`,
    schema: {
      summary: 'Delete a KMS key',
      description:
        'Deletes a named key and all its versions at once and for good: every object version and open upload sealed under it becomes unreadable (a GET answers 400 KMS.NotFoundException saying the key was deleted), and its name is not given to a new key. Refused, and the key stays: 409 KMSKeyInUse naming the buckets while a bucket\'s default encryption names the key (even with force); 400 KMSKeyDeletionNotConfirmed without `force=true`; 400 InvalidArgument for a root key; 400 KMS.NotFoundException for an unknown key. Announced to every node.',
      querystring: schema.mutationQuery({ 'key-id': keyIdParameter, force: schema.oneOfValues(['true'], 'confirms that what the key sealed becomes unreadable') }, ['key-id']),
      response: schema.object({ keyId: schema.text('the deleted key'), deleted: schema.boolean('always true') }),
      example: { query: 'key-id=backups&force=true', response: { keyId: 'backups', deleted: true } },
    },
    access: { actions: [admin.kmsDeleteKey] },
    handle: async (context, request) => {
      kmsOf(context);
      const query = mutationQuery(request.rawQuery, ['key-id', 'force']);
      const force = query.get('force');
      if (force !== undefined && force !== 'true') throw new SvcError('InvalidQueryParameter', `force must be true, not '${force}'`, { parameter: 'force' });
      return keysOf(context).deleteKey(query.get('key-id') ?? '', force === 'true');
    },
  },
];
