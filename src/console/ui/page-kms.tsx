/**
 * KMS keys (`#/kms`, offered when the deployment has a KMS): the root keys and the named keys with
 * their state and version, and deleting a named key in two steps, the second naming the key to be
 * typed again. Each call is the admin API's own KMS route run by the console server in-process
 * (`api/admin/v4/kms/...`); a key a bucket's default encryption names is refused by the server
 * (`KMSKeyInUse`), and the refusal stays in the dialog that asked.
 */
import { useState } from 'preact/hooks';
import { api } from './api';
import { ActionsHead, Badge, Card, ConfirmDialog, Empty, ErrorNotice, RowAction, usePoll } from './components';
import { permissionReason, useDeploymentPermissions } from './permissions';
import { when } from './format';
import type { KmsKeyStatus } from '../../contracts/kms';

type KmsKey = Omit<KmsKeyStatus, 'encryptionOk' | 'decryptionOk'>;

/** Where a deletion stands: the warning first, then the key's name typed again. */
type Deleting = { keyId: string; step: 'warn' | 'confirm' };

export function KmsPage() {
  const permissions = useDeploymentPermissions();
  const keys = usePoll(() => api<{ keys: KmsKey[] }>('GET', 'admin/v4/kms/key/list'), 15_000);
  const deleteReason = permissionReason(permissions, 'kmsDeleteKey');
  const [deleting, setDeleting] = useState<Deleting | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [deleted, setDeleted] = useState<string | undefined>(undefined);
  const close = () => {
    setDeleting(undefined);
    setError(undefined);
  };
  const remove = async (keyId: string) => {
    setBusy(true);
    setError(undefined);
    try {
      await api('POST', 'admin/v4/kms/key/delete', { query: { 'key-id': keyId, force: 'true' } });
      setDeleting(undefined);
      setDeleted(keyId);
      keys.reload();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  const list = keys.data?.keys;
  return (
    <div class="page">
      <h1>KMS keys</h1>
      <p class="muted">
        The built-in KMS's keys. Root keys come from the server's configuration; named keys are created with <code>rc admin kms key create</code> and seal the data keys of SSE-KMS objects that name them.
      </p>
      <ErrorNotice error={keys.error} />
      {deleted ? (
        <p class="notice ok" role="status">
          Key {deleted} was deleted.
        </p>
      ) : null}
      <Card title={`Keys${list ? ` (${list.length})` : ''}`} scrollable>
        {list && list.length === 0 ? <Empty>No keys.</Empty> : null}
        {list && list.length > 0 ? (
          <table class="table kms-table" aria-label="KMS keys">
            <thead>
              <tr>
                <th>Key</th>
                <th>State</th>
                <th class="num">Version</th>
                <th class="hide-narrow">Created</th>
                <ActionsHead />
              </tr>
            </thead>
            <tbody>
              {list.map((key) => (
                <tr key={key.keyId}>
                  <td class="break">
                    <span class="mono">{key.keyId}</span> {key.origin === 'root' ? <span class="muted small">root key</span> : null}
                  </td>
                  <td>
                    <Badge state={key.enabled ? 'enabled' : 'disabled'} />
                  </td>
                  <td class="num">{key.version}</td>
                  <td class="hide-narrow small">{key.createdAt ? when(key.createdAt) : '–'}</td>
                  <RowAction offered={key.origin === 'named' && deleteReason === undefined} label={`Delete key ${key.keyId}`} onClick={() => (setDeleted(undefined), setError(undefined), setDeleting({ keyId: key.keyId, step: 'warn' }))}>
                    Delete
                  </RowAction>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
        {deleteReason !== undefined ? (
          <p class="reason" id="kms-delete-why">
            You cannot delete keys. {deleteReason}
          </p>
        ) : (
          <p class="muted small">Root keys cannot be deleted here: they are the server's configuration.</p>
        )}
      </Card>
      {deleting?.step === 'warn' ? (
        <ConfirmDialog key="warn" title={`Delete the key ${deleting.keyId}?`} confirmLabel="Continue" danger onConfirm={() => setDeleting({ keyId: deleting.keyId, step: 'confirm' })} onCancel={close}>
          <p>
            Every object version and unfinished upload sealed under <strong>{deleting.keyId}</strong> becomes unreadable for good, and the name is never given to a new key. A key that a bucket's default encryption names is refused.
          </p>
        </ConfirmDialog>
      ) : null}
      {deleting?.step === 'confirm' ? (
        <ConfirmDialog key="confirm" title={`Delete the key ${deleting.keyId} for good`} confirmLabel={`Delete ${deleting.keyId}`} danger typeToConfirm={deleting.keyId} busy={busy} error={error} onConfirm={() => void remove(deleting.keyId)} onCancel={close}>
          <p>This cannot be undone: what the key sealed stays stored but can no longer be read.</p>
        </ConfirmDialog>
      ) : null}
    </div>
  );
}
