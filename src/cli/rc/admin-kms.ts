/**
 * `rc admin kms key create|ls|status|rotate|disable|enable|rm` and `rc admin kms rewrap status`: the
 * built-in KMS's keys on the deployment the alias points at, and the background re-wrap a rotation
 * starts (with --watch, followed to its end with a progress bar on a terminal).
 */
import { RcError, table, type RcContext } from './context.js';
import { follow } from './admin.js';

const base = '/svc/admin/v4/kms/key';
const rewrapPath = '/svc/admin/v4/kms/rewrap/status';

export const kmsKeyActions = ['create', 'ls', 'status', 'rotate', 'disable', 'enable', 'rm'] as const;

const keyColumns = ['KEY', 'ORIGIN', 'STATE', 'VERSION', 'CREATED', 'ENCRYPT', 'DECRYPT'];

export async function kmsKey(context: RcContext, action: string, aliasName: string, keyId: string | undefined, watch = false, force = false): Promise<void> {
  const alias = await context.alias(aliasName);
  if (action === 'rm') {
    if (keyId === undefined) throw new RcError('rc admin kms key rm needs a key name', 2);
    const answer = await context.admin(alias, 'POST', `${base}/delete`, { 'key-id': keyId, ...(force ? { force: 'true' } : {}) });
    context.print(answer, () => `deleted KMS key '${answer.keyId}': what it sealed cannot be read any more`);
    return;
  }
  if (action === 'create' || action === 'disable' || action === 'enable' || action === 'rotate') {
    if (keyId === undefined) throw new RcError(`rc admin kms key ${action} needs a key name`, 2);
    const answer = await context.admin(alias, 'POST', `${base}/${action}`, { 'key-id': keyId });
    if (action === 'rotate') {
      const rewrap = watch ? await followRewrap(context, async () => context.admin(alias, 'GET', rewrapPath)) : answer.rewrap;
      context.print({ ...answer, rewrap }, () => [`rotated KMS key '${answer.key.keyId}': version ${answer.key.version} seals from now on`, describeRewrap(rewrap), watch ? '' : `(rc admin kms rewrap status ${aliasName} --watch follows the re-wrap)`].filter(Boolean).join('\n'));
      return;
    }
    const done = { create: 'created', disable: 'disabled', enable: 'enabled' }[action];
    context.print(answer, () => `${done} KMS key '${answer.keyId}'`);
    return;
  }
  if (action === 'ls') {
    const answer = await context.admin(alias, 'GET', `${base}/list`);
    context.print(answer, () => table(keyColumns, (answer.keys as Record<string, any>[]).map(describeRow)));
    return;
  }
  if (action === 'status') {
    const answer = await context.admin(alias, 'GET', `${base}/status`, keyId === undefined ? {} : { 'key-id': keyId });
    context.print(answer, () => table(keyColumns, [describeRow(answer)]));
    return;
  }
  throw new RcError(`unknown kms key action '${action}' (${kmsKeyActions.join(', ')})`, 2);
}

/** `rc admin kms rewrap status <alias> [--watch]`. */
export async function kmsRewrapStatus(context: RcContext, aliasName: string, watch: boolean): Promise<void> {
  const alias = await context.alias(aliasName);
  const status = async () => context.admin(alias, 'GET', rewrapPath);
  const answer = watch ? await followRewrap(context, status) : await status();
  context.print(answer, () => describeRewrap(answer));
}

function followRewrap(context: RcContext, status: () => Promise<Record<string, any>>): Promise<Record<string, any>> {
  return follow(context, 'KMS re-wrap', status, (value) => value.state === 'running', (value) => ({ done: value.bucketsDone, total: value.bucketsTotal }));
}

function describeRewrap(rewrap: Record<string, any>): string {
  if (rewrap.id === null) return 'no key rotation has run';
  const when = `started ${rewrap.startedAt}${rewrap.finishedAt ? `, ${rewrap.state} ${rewrap.finishedAt}` : ''}`;
  return [
    `re-wrap ${rewrap.id} (${rewrap.keyIds.join(', ')}): ${rewrap.state}, ${when}${rewrap.resumed > 0 ? `, resumed ${rewrap.resumed}x after a restart` : ''}`,
    table(['BUCKETS', 'SCANNED', 'REWRAPPED', 'FAILED', 'LAST ERROR'], [[`${rewrap.bucketsDone}/${rewrap.bucketsTotal}`, rewrap.versionsScanned, rewrap.rewrapped, rewrap.failed, rewrap.lastError ?? '-']]),
  ].join('\n');
}

function describeRow(key: Record<string, any>): string[] {
  return [key.keyId, key.origin, key.enabled === false ? 'disabled' : 'enabled', String(key.version ?? 1), key.createdAt ?? '-', key.encryptionOk ? 'ok' : 'FAILED', key.decryptionOk ? 'ok' : 'FAILED'];
}
