/** `rc admin kms key create|ls|status`: the built-in KMS's keys on the deployment the alias points at. */
import { RcError, table, type RcContext } from './context.js';

const base = '/svc/admin/v4/kms/key';

export async function kmsKey(context: RcContext, action: string, aliasName: string, keyId: string | undefined): Promise<void> {
  const alias = await context.alias(aliasName);
  if (action === 'create') {
    if (keyId === undefined) throw new RcError('rc admin kms key create needs a key name', 2);
    const answer = await context.admin(alias, 'POST', `${base}/create`, { 'key-id': keyId });
    context.print(answer, () => `created KMS key '${answer.keyId}'`);
    return;
  }
  if (action === 'ls') {
    const answer = await context.admin(alias, 'GET', `${base}/list`);
    context.print(answer, () => table(['KEY', 'ORIGIN', 'CREATED', 'ENCRYPT', 'DECRYPT'], (answer.keys as Record<string, any>[]).map(describeRow)));
    return;
  }
  if (action === 'status') {
    const answer = await context.admin(alias, 'GET', `${base}/status`, keyId === undefined ? {} : { 'key-id': keyId });
    context.print(answer, () => table(['KEY', 'ORIGIN', 'CREATED', 'ENCRYPT', 'DECRYPT'], [describeRow(answer)]));
    return;
  }
  throw new RcError(`unknown kms key action '${action}' (create, ls, status)`, 2);
}

function describeRow(key: Record<string, any>): string[] {
  return [key.keyId, key.origin, key.createdAt ?? '-', key.encryptionOk ? 'ok' : 'FAILED', key.decryptionOk ? 'ok' : 'FAILED'];
}
